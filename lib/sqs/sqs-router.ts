import type { Type } from '@nestjs/common';
import { parseKeyPath, readKeyPath } from '../idempotency/idempotency-key';
import { ResolvedBodyDecoder, resolveBodyDecoder } from './decoding/body-decoder';
import type { SqsContext } from './sqs-context';
import { getSqsEventOptions, SQS_FALLBACK_EVENT_TYPE } from './sqs-event.decorator';
import { SqsFallback } from './sqs-fallback.decorator';
import { NO_HANDLER_FOR_TYPE } from './sqs-message.errors';
import type { SqsHandlerDefinition } from './sqs-handler.explorer';
import type { SqsDiscriminator } from './sqs-module-options.interface';
import { SqsConfigurationError } from '../common/sqs-idempotency.error';

/** The handlers of one event type on one queue. */
export interface SqsRoute {
  readonly eventType: string;
  readonly eventClass: Type<unknown>;
  readonly handlers: readonly SqsHandlerDefinition[];
  /** The event class's own decoder (`@SqsEvent('x', { decoder })`), if it has one. */
  readonly decoder?: ResolvedBodyDecoder;
  /** The fallback route (`@SqsFallbackHandler()`): the payload reaches it as it is, unvalidated. */
  readonly fallback: boolean;
}

/** How a router reads event types. */
export interface SqsRouterOptions {
  /** Other names of this queue a handler may be bound by (the configured name, the ARN's name). */
  aliases?: readonly string[];
  /** Whether a discriminator was configured; without one, a one-class queue routes every message to its class. */
  discriminatorConfigured?: boolean;
  /** Appended to "no handler" errors: why this queue may have none (an unconfigured queue name). */
  hint?: string;
}

/**
 * Routes one queue's messages by event type; conflicting declarations are refused when it is built.
 * The type comes from a configured discriminator, else an envelope, else (one class, no fallback)
 * nowhere, else the body's `type`; a type no class claims goes to the fallback handler, or is invalid.
 */
export class SqsQueueRouter {
  private readonly routes = new Map<string, SqsRoute>();
  private readonly fallbackRoute: SqsRoute | undefined;
  private readonly onlyRoute: SqsRoute | undefined;
  private readonly readType: (payload: Record<string, unknown>, context: SqsContext) => unknown;
  private readonly discriminatorConfigured: boolean;
  private readonly hint: string;

  constructor(
    readonly queue: string,
    handlers: readonly SqsHandlerDefinition[],
    private readonly discriminator: SqsDiscriminator,
    options: SqsRouterOptions = {},
  ) {
    const aliases = options.aliases ?? [];
    const fallbackHandlers: SqsHandlerDefinition[] = [];
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
          decoder: decoderOf(handler.eventClass, queue),
          fallback: false,
        });
      } else if (route.eventClass !== handler.eventClass) {
        throw new SqsConfigurationError(
          `Queue "${queue}": event type "${handler.eventType}" names both ${route.eventClass.name} and ` +
            `${handler.eventClass.name}; give one of them another name with @SqsEvent('...').`,
        );
      } else {
        (route.handlers as SqsHandlerDefinition[]).push(handler);
      }
    }
    this.fallbackRoute =
      fallbackHandlers.length > 0
        ? {
            eventType: SQS_FALLBACK_EVENT_TYPE,
            eventClass: SqsFallback,
            handlers: fallbackHandlers,
            fallback: true,
          }
        : undefined;
    this.onlyRoute = this.routes.size === 1 ? this.routes.values().next().value : undefined;
    this.discriminatorConfigured = options.discriminatorConfigured ?? false;
    this.readType = eventTypeReader(discriminator, queue);
    this.hint = options.hint ?? '';
  }

  /** Event types with a handler on this queue (the fallback's not included). */
  get eventTypes(): string[] {
    return [...this.routes.keys()];
  }

  /** One class, no discriminator, no fallback: every message goes there, its type unread. */
  get takesEveryMessage(): boolean {
    return this.onlyRoute !== undefined && this.fallbackRoute === undefined && !this.discriminatorConfigured;
  }

  /**
   * One event class beside a fallback handler, with no discriminator configured: the class no longer
   * takes every message (as it alone would) but only bodies whose `type` names it; the rest go to the
   * fallback. Its type and handlers, for the start-up warning; `undefined` otherwise.
   */
  get oneClassBesideFallback(): { eventType: string; eventClass: string; fallback: string } | undefined {
    if (this.onlyRoute === undefined || this.fallbackRoute === undefined || this.discriminatorConfigured) {
      return undefined;
    }
    return {
      eventType: this.onlyRoute.eventType,
      eventClass: this.onlyRoute.eventClass.name,
      fallback: this.fallbackRoute.handlers.map((handler) => handler.name).join(', '),
    };
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
    if (this.onlyRoute !== undefined && this.fallbackRoute === undefined) return this.onlyRoute;
    return undefined;
  }

  /** The route of a message by the type its discriminator reads from the payload; throws the reason when there is none. */
  resolve(payload: Record<string, unknown>, context: SqsContext): SqsRoute {
    return this.routeOf(this.readType(payload, context), context);
  }

  /** Whether a message of this type is routed here, for a host serving other handlers beside (`SqsServer`). */
  claims(type: unknown): boolean {
    if (typeof type === 'string' && this.routes.has(type)) return true;
    if (this.fallbackRoute !== undefined) return true;
    return this.onlyRoute !== undefined && (!this.discriminatorConfigured || isMissing(type));
  }

  /** The route of a type; sets `context.eventType`. Throws the reason when there is none. */
  private routeOf(type: unknown, context: SqsContext): SqsRoute {
    if (isMissing(type)) {
      if (this.onlyRoute !== undefined && this.fallbackRoute === undefined) return this.onlyRoute;
      if (this.fallbackRoute !== undefined) return this.fallbackRoute;
      throw new Error(
        this.routes.size === 0
          ? `no @SqsMessageHandler() listens on queue "${this.queue}"${this.hint}`
          : `it has no event type (${describeDiscriminator(this.discriminator)}) and queue "${this.queue}" has handlers for ` +
              `several types (${this.eventTypes.join(', ')})`,
      );
    }
    const route = typeof type === 'string' ? this.routes.get(type) : undefined;
    if (route !== undefined) return route;
    if (this.fallbackRoute !== undefined) {
      context.eventType = typeof type === 'string' ? type : SQS_FALLBACK_EVENT_TYPE;
      return this.fallbackRoute;
    }
    throw new Error(
      `${NO_HANDLER_FOR_TYPE}${JSON.stringify(type)} on queue "${this.queue}" ` +
        `(handled: ${this.eventTypes.join(', ') || 'none'})${this.hint}`,
    );
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

/** Reads a parsed message's event type as the discriminator says, for every router; throws for an unusable path. */
export function eventTypeReader(
  discriminator: SqsDiscriminator,
  queue: string,
): (payload: Record<string, unknown>, context: SqsContext) => unknown {
  if (typeof discriminator === 'function') return discriminator;
  if ('attribute' in discriminator) {
    const name = discriminator.attribute;
    return (_payload, context) => context.messageAttribute(name);
  }
  const path = parseKeyPath(discriminator.field);
  if (typeof path === 'string')
    throw new SqsConfigurationError(`Queue "${queue}": discriminator field: ${path}`);
  return (payload) => readKeyPath(payload, path);
}

/** Where a message lacking its event type should have carried it, for error messages. */
export function describeDiscriminator(discriminator: SqsDiscriminator): string {
  if (typeof discriminator === 'function') return 'the discriminator function returned nothing';
  if ('attribute' in discriminator) return `no message attribute "${discriminator.attribute}"`;
  return `no body field "${discriminator.field}"`;
}
