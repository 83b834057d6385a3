// Users may decorate event classes before anything loads Nest (which loads the polyfill).
import 'reflect-metadata';
import type { Type } from '@nestjs/common';
import { MESSAGE_TYPE_METADATA } from '../idempotency/idempotency.constants';
import { describeValue, readOptions } from '../common/known-options';
import { SqsConfigurationError } from '../common/sqs-idempotency.error';
import { SQS_MESSAGE_HANDLER_METADATA } from './sqs.constants';
import { getSqsEventType } from './sqs-event.decorator';

/** Options of `@SqsMessageHandler()`. */
export interface SqsMessageHandlerOptions {
  /** The queue (its configured name, or its name in the Lambda event's ARN); omit it for an app of one queue. */
  queue?: string;
}

/** What `@SqsMessageHandler()` (or `@SqsBatchHandler()`, with `batch: true`) records on a method. */
export type SqsMessageHandlerMetadata = SqsMessageHandlerOptions & {
  eventClass: Type<unknown>;
  /** Set by `@SqsBatchHandler()`: the method takes a batch's events at once. */
  batch?: true;
};

/**
 * Makes a provider method the handler of an event class: the body is parsed, mapped and validated
 * before the handler (and any claim) runs with `(event, ctx: SqsContext)`.
 *
 * @example
 * ```ts
 * @SqsMessageHandler(OrderCreated, { queue: 'orders' })
 * async onOrderCreated(event: OrderCreated, ctx: SqsContext) { ... }
 * ```
 */
export function SqsMessageHandler(
  eventClass: Type<unknown>,
  options: SqsMessageHandlerOptions = {},
): MethodDecorator {
  return sqsHandlerDecorator('SqsMessageHandler', eventClass, options, false);
}

/**
 * The decorator of a handler method, per record or per batch (`@SqsBatchHandler()`): records the binding
 * and the event type, and refuses a method declared as both kinds.
 */
export function sqsHandlerDecorator(
  name: 'SqsMessageHandler' | 'SqsBatchHandler',
  eventClass: Type<unknown>,
  options: SqsMessageHandlerOptions,
  batch: boolean,
): MethodDecorator {
  if (typeof eventClass !== 'function') {
    throw new SqsConfigurationError(
      `@${name}(EventClass): EventClass must be a class, got ${describeValue(eventClass)} ` +
        '(an import cycle can leave it undefined where the decorator runs).',
    );
  }
  return (target, key, descriptor) => {
    const where = `@${name}(${eventClass.name}) on ${target.constructor.name}.${String(key)}`;
    const { queue } = readOptions(options, { queue: 'string' }, where, SqsConfigurationError);
    const metadata: SqsMessageHandlerMetadata = batch
      ? { eventClass, queue, batch: true }
      : { eventClass, queue };
    const method = descriptor.value as object;
    const earlier = getSqsMessageHandlerMetadata(method);
    if (earlier !== undefined && (earlier.batch === true) !== batch) {
      throw new SqsConfigurationError(
        `${where}: the method is also an @${batch ? 'SqsMessageHandler' : 'SqsBatchHandler'}(); a method takes ` +
          'either one event (@SqsMessageHandler) or a batch of events (@SqsBatchHandler): keep one decorator.',
      );
    }
    Reflect.defineMetadata(SQS_MESSAGE_HANDLER_METADATA, metadata, method);
    Reflect.defineMetadata(MESSAGE_TYPE_METADATA, () => getSqsEventType(eventClass), method);
    let queues = declaredHandlerClasses.get(target.constructor);
    if (queues === undefined) declaredHandlerClasses.set(target.constructor, (queues = new Set()));
    queues.add(metadata.queue);
    return descriptor;
  };
}

/**
 * Every class with an `@SqsMessageHandler()` method that this copy of the library has seen, with the
 * queues its handlers are bound to (`undefined`: no queue), so that one Nest never instantiates (left
 * out of `providers`) is named at start-up instead of its messages failing as "no handler".
 */
const declaredHandlerClasses = new Map<Function, Set<string | undefined>>();
export const handlerClassesDeclared: ReadonlyMap<
  Function,
  ReadonlySet<string | undefined>
> = declaredHandlerClasses;

/** The `@SqsMessageHandler()` binding of a method, if any. */
export function getSqsMessageHandlerMetadata(method: unknown): SqsMessageHandlerMetadata | undefined {
  return typeof method === 'function' ? Reflect.getMetadata(SQS_MESSAGE_HANDLER_METADATA, method) : undefined;
}
