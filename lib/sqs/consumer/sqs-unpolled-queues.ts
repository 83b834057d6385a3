import type { Logger } from '@nestjs/common';
import type { SqsModuleOptions, SqsQueueOptions } from '../sqs-module-options.interface';
import { SqsConfigurationError } from '../../common/sqs-idempotency.error';

/**
 * Why a declared queue is not polled (its `url` is empty, or it has `consume: false`): the start-up line
 * or refusal, and the error of `SqsConsumerManager.start()`/`stop()` naming it. Loaded by the manager at
 * module init where such a queue is declared.
 */

/**
 * Says once that each queue whose `url` is empty is not polled (`url: process.env.X` with X unset: fine in
 * a test module, where SqsTestClient sends its records, and worth a line in a service); refuses to start
 * only where polling was asked for in so many words (`autoStart: true`).
 */
export function reportUnpolledQueues(
  queues: readonly SqsQueueOptions[],
  options: SqsModuleOptions,
  logger: Logger,
): void {
  for (const queue of queues) {
    if (queue.url || queue.consume === false) continue;
    if (options.autoStart === true) throw noUrlError(queue);
    logger.warn(
      `Queue "${queue.name}" has no url (${JSON.stringify(queue.url)}), so it is not polled; its handlers ` +
        'still serve records sent by SqsTestClient or the Lambda host. Set its url to poll it (an unset ' +
        'environment variable?), or autoStart: true to refuse to start without it.',
    );
  }
}

/** Why the queue named to `start()`/`stop()` is not polled, where it is declared; `undefined` otherwise. */
export function notPolledError(queue: string, options: SqsModuleOptions): Error | undefined {
  const declared = options.queues?.find((candidate) => candidate.name === queue);
  if (declared?.consume === false) {
    return new SqsConfigurationError(
      `SqsConsumerManager: queue "${queue}" has consume: false (this app only sends to it), so it is not polled. ` +
        'Remove consume: false to poll it.',
    );
  }
  return declared && 'url' in declared ? noUrlError(declared) : undefined;
}

function noUrlError(queue: SqsQueueOptions): Error {
  return new SqsConfigurationError(
    `SqsModule: queue "${queue.name}" has no url (${JSON.stringify(queue.url)}), so it cannot be polled. ` +
      'Set its url (an unset environment variable?), or leave autoStart unset to start without polling it.',
  );
}
