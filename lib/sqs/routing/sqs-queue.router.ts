import type { Type } from '@nestjs/common';
import { KeyPath, parseKeyPath, readKeyPath } from '../../idempotency/idempotency-key';
import { ResolvedBodyDecoder, resolveBodyDecoder } from '../sqs-body.decoder';
import type { SqsContext } from '../sqs-context';
import { getSqsEventOptions, SQS_FALLBACK_EVENT_TYPE } from '../sqs-event.decorator';
import { SqsFallback } from '../sqs-fallback.decorator';
import { InvalidSqsMessageError } from '../sqs-message.errors';
import type { SqsRouteHandler } from '../pipeline/sqs-record.pipeline';
import type { SqsRecordSink } from '../pipeline/sqs-record.sink';
import type { SqsDiscriminator } from '../sqs-module-options.interface';
import { SqsConfigurationError } from '../../common/sqs-idempotency.error';

/** A handler to route to: an `@SqsMessageHandler()` method, or an `@EventPattern()` handler of `SqsServer`. */
export interface SqsRoutable extends SqsRouteHandler {
  readonly eventType: string;
  /** The class its payload is mapped onto and validated; `undefined` for an `@EventPattern()` handler. */
  readonly eventClass: Type<unknown> | undefined;
  /** The queue it is bound to; `undefined`: every queue. */
  readonly queue: string | undefined;
}

/** The handlers of one event type on one queue (no `eventClass`: they get the payload unvalidated). */
export interface SqsRoute extends Pick<SqsRoutable, 'eventType' | 'eventClass'> {
  readonly handlers: readonly SqsRouteHandler[];
  /** The event class's own decoder (`@SqsEvent('x', { decoder })`), if it has one. */
  readonly decoder?: ResolvedBodyDecoder;
  /** Where its records are logged and counted, when not where the host's are (`SqsModule`'s routes on `SqsServer`). */
  readonly sink?: SqsRecordSink;
}

/** How a router reads event types. */
export interface SqsRouterOptions {
  /** Other names of this queue a handler may be bound by (the configured name, the ARN's name). */
  aliases?: readonly string[];
  /** Whether a discriminator was configured; without one, a one-class queue routes every message to its class. */
  discriminatorConfigured?: boolean;
  /** Appended to "no handler" errors: why a message of this type may have none. */
  hint?: (type: unknown) => string;
  /** The sink of the routes of `@SqsMessageHandler()` handlers (`SqsRoute.sink`). */
  sink?: SqsRecordSink;
  /** What "no handler listens" names. Default `@SqsMessageHandler()`. */
  handlerKind?: string;
}

/**
 * Routes one queue's messages by event type; conflicting declarations are refused when it is built.
 * The type comes from a configured discriminator, else an envelope, else (one class, no fallback)
 * nowhere, else the body's `type`; a type no handler claims goes to the fallback handler, or is invalid.
 */
export class SqsQueueRouter {
  private readonly routes = new Map<string, SqsRoute>();
  /** The fallback handlers' route (`@SqsMessageHandler(SqsFallback)`): what no event class claims. */
  readonly fallbackRoute: SqsRoute | undefined;
  /** The queue's route when it has only one (the fallback's aside). */
  readonly onlyRoute: SqsRoute | undefined;
  private readonly readType: (payload: Record<string, unknown>, context: SqsContext) => unknown;
  readonly discriminatorConfigured: boolean;
  /**
   * The routes an `@SqsBatchHandler()` takes (the queue's batches then go through the batch runner),
   * checked by `sqs-batch-handler.checks.ts` where the queue is built.
   */
  readonly batchRoutes: readonly SqsRoute[];

  constructor(
    readonly queue: string,
    private readonly handlers: readonly SqsRoutable[],
    private readonly discriminator: SqsDiscriminator,
    private readonly options: SqsRouterOptions = {},
  ) {
    const aliases = options.aliases ?? [];
    const fallbackHandlers: SqsRoutable[] = [];
    for (const handler of handlers) {
      if (handler.queue !== undefined && handler.queue !== queue && !aliases.includes(handler.queue))
        continue;
      if (handler.eventClass === SqsFallback) {
        fallbackHandlers.push(handler);
        continue;
      }
      const route = this.routes.get(handler.eventType);
      if (route === undefined) {
        this.routes.set(handler.eventType, {
          eventType: handler.eventType,
          eventClass: handler.eventClass,
          handlers: [handler],
          decoder: handler.eventClass && decoderOf(handler.eventClass, queue),
          sink: handler.eventClass && options.sink,
        });
      } else if (route.eventClass !== handler.eventClass) {
        throw new SqsConfigurationError(
          `Queue "${queue}": event type "${handler.eventType}" names both ${route.eventClass?.name} and ` +
            `${handler.eventClass?.name}; give one of them another name with @SqsEvent('...').`,
        );
      } else {
        (route.handlers as SqsRouteHandler[]).push(handler);
      }
    }
    this.fallbackRoute =
      fallbackHandlers.length > 0
        ? {
            eventType: SQS_FALLBACK_EVENT_TYPE,
            eventClass: undefined,
            handlers: fallbackHandlers,
            sink: options.sink,
          }
        : undefined;
    this.onlyRoute = this.routes.size === 1 ? this.routes.values().next().value : undefined;
    this.batchRoutes = [...this.routes.values()].filter((route) =>
      route.handlers.some((handler) => handler.batch !== undefined),
    );
    this.discriminatorConfigured = options.discriminatorConfigured ?? false;
    this.readType = eventTypeReader(discriminator);
  }

  /** This queue's routes with another host's handlers beside them (`SqsServer`'s `@EventPattern()`s). */
  withHandlers(handlers: readonly SqsRoutable[], options: SqsRouterOptions): SqsQueueRouter {
    return new SqsQueueRouter(this.queue, [...handlers, ...this.handlers], this.discriminator, {
      ...this.options,
      ...options,
    });
  }

  /** Event types with a handler on this queue (the fallback's not included). */
  get eventTypes(): string[] {
    return [...this.routes.keys()];
  }

  /** One class, no discriminator, no fallback: every message goes there, its type unread. */
  get takesEveryMessage(): boolean {
    return (
      this.onlyRoute?.eventClass !== undefined &&
      this.fallbackRoute === undefined &&
      !this.discriminatorConfigured
    );
  }

  /** Whether a fallback handler takes what no event class claims. */
  get hasFallback(): boolean {
    return this.fallbackRoute !== undefined;
  }

  /** The route when it can be told before the body is read, else `undefined` (a field or function discriminator). */
  routeBeforeDecoding(envelopeType: string | undefined, context: SqsContext): SqsRoute | undefined {
    if (this.discriminatorConfigured) {
      if (typeof this.discriminator === 'object' && 'attribute' in this.discriminator) {
        return this.routeOf(context.messageAttribute(this.discriminator.attribute), context);
      }
      return undefined;
    }
    if (envelopeType !== undefined) return this.routeOf(envelopeType, context);
    // One event class takes every message; an `@EventPattern()` only those of its type.
    return this.takesEveryMessage ? this.onlyRoute : undefined;
  }

  /** The route of a message by the type its discriminator reads from the payload; throws the reason when there is none. */
  resolve(payload: Record<string, unknown>, context: SqsContext): SqsRoute {
    return this.routeOf(this.readType(payload, context), context);
  }

  /** The route of a type; sets `context.eventType` for the fallback. Throws the reason when there is none. */
  private routeOf(type: unknown, context: SqsContext): SqsRoute {
    if (isMissing(type)) {
      const route = this.fallbackRoute ?? this.onlyRoute;
      if (route !== undefined) return route;
      throw new Error(
        this.routes.size === 0
          ? `no ${this.options.handlerKind ?? '@SqsMessageHandler()'} listens on queue "${this.queue}"${this.hint(type)}`
          : `it has no event type (${describeDiscriminator(this.discriminator)}) and queue "${this.queue}" has handlers for ` +
              `several types (${this.describeTypes()})`,
      );
    }
    const route = typeof type === 'string' ? this.routes.get(type) : undefined;
    if (route !== undefined) return route;
    if (this.fallbackRoute !== undefined) {
      context.eventType = typeof type === 'string' ? type : SQS_FALLBACK_EVENT_TYPE;
      return this.fallbackRoute;
    }
    throw new InvalidSqsMessageError(
      context.messageId,
      this.queue,
      `no handler for event type ${JSON.stringify(type)} on queue "${this.queue}" ` +
        `(handled: ${this.describeTypes()})${this.hint(type)}`,
      typeof type === 'string' ? type : undefined,
    );
  }

  private hint(type: unknown): string {
    return this.options.hint?.(type) ?? '';
  }

  private describeTypes(): string {
    const types = [...this.routes.values()].map((route) =>
      route.eventClass === undefined ? `@EventPattern('${route.eventType}')` : route.eventType,
    );
    return types.join(', ') || 'none';
  }
}

function isMissing(type: unknown): boolean {
  return type === undefined || type === null || type === '';
}

function decoderOf(eventClass: Type<unknown>, queue: string): ResolvedBodyDecoder | undefined {
  const { decoder } = getSqsEventOptions(eventClass);
  return decoder === undefined
    ? undefined
    : resolveBodyDecoder(decoder, `Queue "${queue}": @SqsEvent() of ${eventClass.name}`);
}

/** Reads a parsed message's event type as the discriminator says (its path checked by `resolveDispatchOptions`). */
function eventTypeReader(
  discriminator: SqsDiscriminator,
): (payload: Record<string, unknown>, context: SqsContext) => unknown {
  if (typeof discriminator === 'function') return discriminator;
  if ('attribute' in discriminator) {
    const name = discriminator.attribute;
    return (_payload, context) => context.messageAttribute(name);
  }
  const path = parseKeyPath(discriminator.field) as KeyPath;
  return (payload) => readKeyPath(payload, path);
}

/** Where a message lacking its event type should have carried it, for error messages. */
function describeDiscriminator(discriminator: SqsDiscriminator): string {
  if (typeof discriminator === 'function') return 'the discriminator function returned nothing';
  if ('attribute' in discriminator) return `no message attribute "${discriminator.attribute}"`;
  return `no body field "${discriminator.field}"`;
}
