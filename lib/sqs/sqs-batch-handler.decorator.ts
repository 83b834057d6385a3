import type { Type } from '@nestjs/common';
import { SqsConfigurationError } from '../common/sqs-idempotency.error';
import { SqsFallback } from './sqs-fallback.decorator';
import { SqsMessageHandlerOptions, sqsHandlerDecorator } from './sqs-message-handler.decorator';

/**
 * Makes a provider method the batch handler of an event class: it receives the batch's events of that
 * class at once, `(events: EventClass[], batch: SqsBatchContext)`, each parsed, mapped and validated as
 * for `@SqsMessageHandler()`. Under `@Idempotent()` every event keeps its own claim: the batch's keys are
 * claimed in one turn, duplicates never reach the handler, and each event's result is settled on its own
 * (the handler names the events that failed by returning `SqsBatchFailures`). For bulk writes: see
 * docs/batch-handlers.md. Not on FIFO queues, nor beside an `@SqsMessageHandler()` of the same event
 * type on the same queue (both refused at start-up).
 *
 * @example
 * ```ts
 * @SqsBatchHandler(OrderCreated)
 * @Idempotent()
 * async onOrders(events: OrderCreated[], batch: SqsBatchContext) {
 *   await this.orders.insertMany(events);
 * }
 * ```
 */
export function SqsBatchHandler(
  eventClass: Type<unknown>,
  options: SqsMessageHandlerOptions = {},
): MethodDecorator {
  if (eventClass === SqsFallback) {
    throw new SqsConfigurationError(
      '@SqsBatchHandler(SqsFallback): a fallback takes payloads one at a time; use @SqsFallbackHandler() ' +
        'for them, and @SqsBatchHandler() with an event class.',
    );
  }
  return sqsHandlerDecorator('SqsBatchHandler', eventClass, options, true);
}
