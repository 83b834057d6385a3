import { parseKeyPath } from '../idempotency/idempotency-key';
import type { SqsMessageDecoding, SqsOpenedMessage } from './decoding/sqs-message-decoding';
import type { SqsContext } from './sqs-context';
import type { SqsPipelineQueue, SqsRoutedRecord } from './sqs-record-pipeline';
import type { SqsRecordLike } from './sqs-record.interface';
import type { SqsQueueRouter } from './sqs-router';
import {
  ResolvedSqsDispatchOptions,
  SQS_DISPATCH_DEFAULTS,
  SqsDispatchOptions,
} from './sqs-module-options.interface';
import { SqsConfigurationError } from '../common/sqs-idempotency.error';

/** A queue as `SqsModule` runs it: its effective options, its router and its decoding stage. */
export interface ResolvedQueue extends SqsPipelineQueue {
  readonly name: string;
  readonly fifo: boolean;
  readonly options: ResolvedSqsDispatchOptions;
  readonly router: SqsQueueRouter;
  /** Its decoding stage: envelopes and the body decoder. */
  readonly decoding: SqsMessageDecoding;
  /** Routes a record to its `@SqsMessageHandler()` handlers (`opened`: the host opened it already). */
  route(record: SqsRecordLike, context: SqsContext, opened?: SqsOpenedMessage): Promise<SqsRoutedRecord>;
}

/** Merges dispatch options (module → queue → host, later winning) and checks the result. */
export function resolveDispatchOptions(
  layers: ReadonlyArray<SqsDispatchOptions | undefined>,
  where: string,
): ResolvedSqsDispatchOptions {
  const resolved: ResolvedSqsDispatchOptions = { ...SQS_DISPATCH_DEFAULTS };
  for (const layer of layers) {
    if (!layer) continue;
    if (layer.discriminator !== undefined) {
      resolved.discriminator = layer.discriminator;
      resolved.discriminatorConfigured = true;
    }
    if (layer.decoder !== undefined) resolved.decoder = layer.decoder;
    if (layer.envelope !== undefined) resolved.envelope = layer.envelope;
    if (layer.concurrency !== undefined) resolved.concurrency = layer.concurrency;
    if (layer.fifoFailureMode !== undefined) resolved.fifoFailureMode = layer.fifoFailureMode;
    if (layer.validation !== undefined) resolved.validation = { ...resolved.validation, ...layer.validation };
  }
  if (!Number.isInteger(resolved.concurrency) || resolved.concurrency < 1) {
    throw new SqsConfigurationError(
      `SQS ${where}: concurrency must be a positive integer, got ${String(resolved.concurrency)}.`,
    );
  }
  if (resolved.fifoFailureMode !== 'isolate_groups' && resolved.fifoFailureMode !== 'halt_batch') {
    throw new SqsConfigurationError(
      `SQS ${where}: fifoFailureMode must be 'isolate_groups' or 'halt_batch', got ${String(resolved.fifoFailureMode)}.`,
    );
  }
  const discriminator = resolved.discriminator as unknown;
  if (typeof discriminator !== 'function') {
    const shape = discriminator as { field?: unknown; attribute?: unknown } | null;
    if (typeof shape?.attribute === 'string' && shape.attribute.length > 0) return resolved;
    const path = typeof shape?.field === 'string' ? parseKeyPath(shape.field) : undefined;
    if (path === undefined || typeof path === 'string') {
      throw new SqsConfigurationError(
        `SQS ${where}: discriminator must be { field: 'type' }, { attribute: 'eventType' } or a function` +
          (typeof path === 'string' ? ` (${path})` : '') +
          '.',
      );
    }
  }
  return resolved;
}
