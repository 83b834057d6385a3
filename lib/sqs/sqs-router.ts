import type { Type } from '@nestjs/common';
import { parseKeyPath, readKeyPath } from '../idempotency/idempotency-key';
import type { SqsContext } from './sqs-context';
import type { SqsHandlerDefinition } from './sqs-handler.explorer';
import type { SqsDiscriminator } from './sqs-module-options.interface';

/** The handlers of one event type on one queue. */
export interface SqsRoute {
  readonly eventType: string;
  readonly eventClass: Type<unknown>;
  readonly handlers: readonly SqsHandlerDefinition[];
}

/**
 * Routes the messages of one queue to handlers by event type. Built once per queue; conflicting
 * declarations (one type name for two classes) are refused when it is built, so they stop the app
 * at start-up instead of misrouting messages.
 */
export class SqsQueueRouter {
  private readonly routes = new Map<string, SqsRoute>();
  private readonly onlyRoute: SqsRoute | undefined;
  private readonly readType: (payload: Record<string, unknown>, context: SqsContext) => unknown;

  /**
   * @param aliases other names of this queue a handler may be bound by: a queue configured as
   *   `{ name: 'orders', url: '.../prod-orders' }` is `orders` to the polling host and `prod-orders`
   *   to Lambda (its ARN), and a handler bound to either belongs to it.
   */
  constructor(
    readonly queue: string,
    handlers: readonly SqsHandlerDefinition[],
    private readonly discriminator: SqsDiscriminator,
    aliases: readonly string[] = [],
  ) {
    for (const handler of handlers) {
      if (handler.queue !== undefined && handler.queue !== queue && !aliases.includes(handler.queue))
        continue;
      const route = this.routes.get(handler.eventType);
      if (route === undefined) {
        this.routes.set(handler.eventType, {
          eventType: handler.eventType,
          eventClass: handler.eventClass,
          handlers: [handler],
        });
      } else if (route.eventClass !== handler.eventClass) {
        throw new Error(
          `Queue "${queue}": event type "${handler.eventType}" names both ${route.eventClass.name} and ` +
            `${handler.eventClass.name}; give one of them another name with @SqsEvent('...').`,
        );
      } else {
        (route.handlers as SqsHandlerDefinition[]).push(handler);
      }
    }
    this.onlyRoute = this.routes.size === 1 ? this.routes.values().next().value : undefined;
    this.readType = eventTypeReader(discriminator, queue);
  }

  /** Event types with a handler on this queue. */
  get eventTypes(): string[] {
    return [...this.routes.keys()];
  }

  /** The route of a message; throws an `Error` whose message is the reason when there is none. */
  resolve(payload: Record<string, unknown>, context: SqsContext): SqsRoute {
    const type = this.readType(payload, context);
    if (type === undefined || type === null || type === '') {
      if (this.onlyRoute) return this.onlyRoute;
      throw new Error(
        this.routes.size === 0
          ? `no @SqsMessageHandler() listens on queue "${this.queue}"`
          : `it has no event type (${this.describeDiscriminator()}) and queue "${this.queue}" has handlers for ` +
              `several types (${this.eventTypes.join(', ')})`,
      );
    }
    const route = typeof type === 'string' ? this.routes.get(type) : undefined;
    if (route === undefined) {
      throw new Error(
        `${NO_HANDLER_FOR_TYPE}${JSON.stringify(type)} on queue "${this.queue}" ` +
          `(handled: ${this.eventTypes.join(', ') || 'none'})`,
      );
    }
    return route;
  }

  private describeDiscriminator(): string {
    return describeDiscriminator(this.discriminator);
  }
}

/** How the reason of a message naming a type no handler routes begins (see `unroutedEventTypeOf`). */
const NO_HANDLER_FOR_TYPE = 'no handler for event type ';
const UNROUTED_TYPE = /^no handler for event type ("(?:[^"\\]|\\.)*") on queue /;

/**
 * The event type a message named when no handler routes it, read back from the reason the router
 * gave (`InvalidSqsMessageError.reason`), for the Idempotency Center's list of types that arrived
 * with no handler. Only string types count (a number or an object is not a routable-looking type).
 * Kept beside the sentence it reads, so the two change together.
 */
export function unroutedEventTypeOf(reason: string): string | undefined {
  if (!reason.startsWith(NO_HANDLER_FOR_TYPE)) return undefined;
  const quoted = UNROUTED_TYPE.exec(reason)?.[1];
  if (quoted === undefined) return undefined;
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return undefined;
  }
}

/**
 * Reads the event type of a parsed message as the discriminator says (body field, message
 * attribute or function), for every router of the app (`SqsQueueRouter`, the microservice
 * transport). Throws when a field's dot path is unusable.
 */
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
  if (typeof path === 'string') throw new Error(`Queue "${queue}": discriminator field: ${path}`);
  return (payload) => readKeyPath(payload, path);
}

/** Where a message lacking its event type should have carried it, for error messages. */
export function describeDiscriminator(discriminator: SqsDiscriminator): string {
  if (typeof discriminator === 'function') return 'the discriminator function returned nothing';
  if ('attribute' in discriminator) return `no message attribute "${discriminator.attribute}"`;
  return `no body field "${discriminator.field}"`;
}
