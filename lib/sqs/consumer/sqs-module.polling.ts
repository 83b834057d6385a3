import { Logger } from '@nestjs/common';
import type { SqsQueueRegistry } from '../nest/sqs-queue.registry';
import { queueAliases } from '../nest/sqs-queue.registry';
import type { SqsModuleOptions, SqsQueueOptions } from '../sqs-module-options.interface';
import type { SqsConsumerEventListener } from './sqs-consumer-event.decorator';
import { SqsConsumerSet, SqsConsumerSetQueue } from './sqs-consumer-set';

export { findConsumerEventListeners } from './sqs-consumer-event.listeners';

/**
 * `SqsModule`'s consumers, none polling yet: one per queue with a url, with its listeners; a polled
 * queue without a handler is named. Loaded by `SqsConsumerManager` only where the app polls.
 */
export async function createModuleConsumers(
  queues: readonly SqsQueueOptions[],
  listeners: readonly SqsConsumerEventListener[],
  registry: SqsQueueRegistry,
  options: SqsModuleOptions,
): Promise<SqsConsumerSet> {
  const logger = new Logger('SqsConsumer');
  const polled: SqsConsumerSetQueue[] = [];
  for (const queue of queues) {
    const router = registry.queue(queue.name).router;
    if (router.eventTypes.length === 0 && !router.hasFallback) {
      logger.warn(
        `Queue "${queue.name}" has no handler: every message polled from it would fail as invalid and reach its ` +
          'dead-letter queue. Bind a handler to it, or set consume: false on it if this app only sends to it.',
      );
    }
    polled.push({
      queue: { ...queue, url: queue.url! },
      listeners: listeners.filter((listener) => queueAliases(queue).includes(listener.queue)),
    });
  }
  const consumers = new SqsConsumerSet({ host: 'SqsModule', dispatcher: registry, options });
  await consumers.create(polled);
  return consumers;
}
