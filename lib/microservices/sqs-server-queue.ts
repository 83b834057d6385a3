import type { ResolvedSqsDispatchOptions } from '../sqs/sqs-module-options.interface';
import { isFifoQueue, resolveDispatchOptions, ResolvedQueue, resolveQueue } from '../sqs/sqs-queue.resolver';
import { SqsQueueRouter } from '../sqs/sqs-router';
import type { SqsServerOptions, SqsServerQueueOptions } from './sqs-server-options.interface';
import { SqsConfigurationError } from '../common/sqs-idempotency.error';
import { checkQueueName } from '../sqs/consumer/sqs-queue-bindings';

/** A queue as `SqsServer` runs it: its declaration, its options, and its routes (built again once the handlers are known). */
export interface SqsServerQueue {
  readonly declared: SqsServerQueueOptions;
  /** The server's options, then the queue's. */
  readonly options: ResolvedSqsDispatchOptions;
  resolved: ResolvedQueue;
}

/** Checks and resolves `new SqsServer()`'s queues, so a typo fails where the server is built. */
export function resolveServerQueues(options: SqsServerOptions): Map<string, SqsServerQueue> {
  const queues = new Map<string, SqsServerQueue>();
  const problems: string[] = [];
  if (!Array.isArray(options?.queues) || options.queues.length === 0) {
    throw new SqsConfigurationError(
      'SqsServer: give at least one queue: new SqsServer({ queues: [{ name, url }] }).',
    );
  }
  for (const queue of options.queues) {
    if (!checkQueueName(queue, queues, problems)) continue;
    const { name } = queue;
    if (typeof queue.url !== 'string' || queue.url.length === 0) {
      problems.push(
        `queue "${name}" has no url (${JSON.stringify(queue.url)}); an unset environment variable?`,
      );
      continue;
    }
    try {
      const resolved = resolveDispatchOptions([options, queue], `SqsServer queue "${name}"`);
      const router = new SqsQueueRouter(name, [], resolved.discriminator);
      queues.set(name, {
        declared: queue,
        options: resolved,
        resolved: resolveQueue(name, isFifoQueue(name, queue), resolved, router),
      });
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  if (problems.length > 0)
    throw new SqsConfigurationError(`SqsServer cannot start:\n- ${problems.join('\n- ')}`);
  return queues;
}
