import { SqsMessageDecoding } from '../sqs/decoding/sqs-message-decoding';
import type { SqsContext } from '../sqs/sqs-context';
import type { ResolvedSqsDispatchOptions } from '../sqs/sqs-module-options.interface';
import { resolveDispatchOptions } from '../sqs/sqs-queue.resolver';
import type { ResolvedQueue } from '../sqs/sqs-queue.resolver';
import type { SqsPipelineQueue, SqsRoutedRecord } from '../sqs/sqs-record-pipeline';
import type { SqsRecordLike } from '../sqs/sqs-record.interface';
import { eventTypeReader } from '../sqs/sqs-router';
import type { SqsServerOptions, SqsServerQueueOptions } from './sqs-server-options.interface';
import { SqsConfigurationError } from '../common/sqs-idempotency.error';

/** A queue as `SqsServer` runs it: its declaration, its effective dispatch options, its type reader. */
export interface SqsServerQueue extends SqsPipelineQueue {
  readonly name: string;
  readonly declared: SqsServerQueueOptions;
  readonly fifo: boolean;
  /** The server's options, then the queue's; also the pipeline's overrides, so `SqsModule`'s routes read alike. */
  readonly options: ResolvedSqsDispatchOptions;
  readonly readType: (payload: Record<string, unknown>, context: SqsContext) => unknown;
  /** Its decoding stage (envelopes, body decoder), shared with the record pipeline's routes. */
  readonly decoding: SqsMessageDecoding;
  /** Event types the app's record pipeline (`SqsModule`) routes on this queue; empty without it. */
  sqsTypes: ReadonlySet<string>;
  /** `SqsModule`'s resolved queue of this name, with its router (`SqsModule` present). */
  sqsQueue?: ResolvedQueue;
  /** The server's routing of a record (`SqsServerRouter.route`). */
  route(record: SqsRecordLike, context: SqsContext): Promise<SqsRoutedRecord>;
}

/** Checks and resolves `new SqsServer()`'s queues, so a typo fails where the server is built. */
export function resolveServerQueues(
  options: SqsServerOptions,
  route: (queue: SqsServerQueue, record: SqsRecordLike, context: SqsContext) => Promise<SqsRoutedRecord>,
): Map<string, SqsServerQueue> {
  const queues = new Map<string, SqsServerQueue>();
  const problems: string[] = [];
  if (!Array.isArray(options?.queues) || options.queues.length === 0) {
    throw new SqsConfigurationError(
      'SqsServer: give at least one queue: new SqsServer({ queues: [{ name, url }] }).',
    );
  }
  for (const queue of options.queues) {
    const name = queue?.name;
    if (typeof name !== 'string' || name.length === 0) {
      problems.push(`a queue has no name (${JSON.stringify(queue)})`);
      continue;
    }
    if (queues.has(name)) problems.push(`the queue name "${name}" is configured twice`);
    if (typeof queue.url !== 'string' || queue.url.length === 0) {
      problems.push(
        `queue "${name}" has no url (${JSON.stringify(queue.url)}); an unset environment variable?`,
      );
      continue;
    }
    try {
      const resolved = resolveDispatchOptions([options, queue], `SqsServer queue "${name}"`);
      const serverQueue: SqsServerQueue = {
        name,
        declared: queue,
        fifo: queue.fifo ?? (name.endsWith('.fifo') || queue.url.endsWith('.fifo')),
        options: resolved,
        readType: eventTypeReader(resolved.discriminator, name),
        decoding: SqsMessageDecoding.of(name, resolved),
        sqsTypes: new Set(),
        route: (record, context) => route(serverQueue, record, context),
      };
      queues.set(name, serverQueue);
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  if (problems.length > 0)
    throw new SqsConfigurationError(`SqsServer cannot start:\n- ${problems.join('\n- ')}`);
  return queues;
}
