import type { SqsRouteHandler } from '../pipeline/sqs-record.pipeline';
import type { IdempotencyStore } from '../../stores/idempotency-store.interface';
import { IdempotencyConfigurationError, SqsConfigurationError } from '../../common/sqs-idempotency.error';
import type { SqsRoute } from './sqs-queue.router';

/**
 * What `@SqsBatchHandler()` declarations cannot work with, refused at start-up with the fix: loaded by
 * `SqsModule`'s queue registry where the app declares a batch handler.
 */

/**
 * A queue's routes that an `@SqsBatchHandler()` takes: each must be its event type's only handler on the
 * queue (each event is claimed and settled once), and the queue must be a standard one.
 */
export function checkBatchRoutes(queue: string, fifo: boolean, routes: readonly SqsRoute[]): void {
  for (const { eventType, handlers } of routes) {
    if (handlers.length === 1) continue;
    const first = handlers[0];
    const second = first.batch !== undefined ? handlers[1] : handlers.find((handler) => handler.batch)!;
    const kind = (handler: SqsRouteHandler) =>
      `${handler.name} (${handler.batch ? '@SqsBatchHandler' : '@SqsMessageHandler'})`;
    const bothBatch = first.batch !== undefined && second.batch !== undefined;
    throw new SqsConfigurationError(
      `Queue "${queue}": event type "${eventType}" has both ${kind(first)} and ${kind(second)}; a batch handler ` +
        'must be the only handler of its event type on its queue (each event is claimed and settled once). ' +
        (bothBatch
          ? 'Merge the two into one @SqsBatchHandler()'
          : 'Make them one kind (both @SqsMessageHandler(), or one @SqsBatchHandler() doing both jobs)') +
        ', or bind one to another queue with { queue }.',
    );
  }
  if (fifo && routes.length > 0) {
    throw new SqsConfigurationError(
      `Queue "${queue}" is a FIFO queue, and @SqsBatchHandler() is not supported on FIFO queues (a batch call ` +
        'would mix message groups whose order must hold). Use @SqsMessageHandler() for its events, or bind the ' +
        "batch handler to a standard queue with @SqsBatchHandler(EventClass, { queue: '...' }).",
    );
  }
}

/** A transactional batch handler needs a store that runs a batch's claims in one transaction. */
export function checkTransactionalBatch(handlerName: string, store: IdempotencyStore): void {
  if (typeof store.runBatchInTransaction === 'function') return;
  throw new IdempotencyConfigurationError(
    `@Idempotent({ transactional: true }) on ${handlerName}, an @SqsBatchHandler(): the store ` +
      `${store.constructor.name} runs single records in a transaction (runInTransaction) but not a batch ` +
      "handler's call (runBatchInTransaction). Use PostgresIdempotencyStore, or drop transactional and make the " +
      'bulk write tolerate repeats (INSERT ... ON CONFLICT DO NOTHING: docs/batch-handlers.md).',
  );
}
