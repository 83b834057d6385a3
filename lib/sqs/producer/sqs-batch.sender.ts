import type { SqsSendFailure, SqsSentMessage } from './sqs-producer.options';

/**
 * Sends entries with a batch API (SQS `SendMessageBatch`, SNS `PublishBatch`), 10 entries and
 * 256 KiB a batch, in order (so FIFO groups leave in order). An entry refused for itself is final;
 * one the service failed is retried with the others of its batch, with backoff, up to `maxAttempts`.
 */
export interface OutgoingEntry<T> {
  readonly index: number;
  readonly event: T;
  /** The API's entry, `Id` included (the index, unique within the call). */
  readonly entry: { Id: string } & Record<string, unknown>;
  /** Bytes it counts for in a batch. */
  readonly size: number;
}

/** What `SendMessageBatch` and `PublishBatch` answer. */
export interface BatchAnswer {
  Successful?: Array<{ Id?: string; MessageId?: string; SequenceNumber?: string }>;
  Failed?: Array<{ Id?: string; Code?: string; Message?: string; SenderFault?: boolean }>;
}

export interface BatchSenderOptions {
  maxAttempts: number;
  retryDelayMs: number;
}

const MAX_ENTRIES = 10;
const MAX_BATCH_BYTES = 262_144;

export async function sendInBatches<T>(
  entries: readonly OutgoingEntry<T>[],
  sendBatch: (entries: Array<OutgoingEntry<T>['entry']>) => Promise<BatchAnswer>,
  options: BatchSenderOptions,
): Promise<{ sent: SqsSentMessage<T>[]; failed: SqsSendFailure<T>[] }> {
  const sent: SqsSentMessage<T>[] = [];
  const failed: SqsSendFailure<T>[] = [];
  for (const batch of cut(entries)) {
    let pending = batch;
    for (let attempt = 1; pending.length > 0; attempt++) {
      const answer = await call(sendBatch, pending);
      const byId = new Map(pending.map((entry) => [entry.entry.Id, entry]));
      for (const success of answer.Successful ?? []) {
        const entry = byId.get(success.Id ?? '');
        if (entry === undefined) continue;
        byId.delete(entry.entry.Id);
        sent.push({
          event: entry.event,
          index: entry.index,
          messageId: success.MessageId ?? '',
          ...(success.SequenceNumber === undefined ? {} : { sequenceNumber: success.SequenceNumber }),
        });
      }
      const retry: OutgoingEntry<T>[] = [];
      for (const failure of answer.Failed ?? []) {
        const entry = byId.get(failure.Id ?? '');
        if (entry === undefined) continue;
        byId.delete(entry.entry.Id);
        const senderFault = failure.SenderFault !== false;
        if (!senderFault && attempt < options.maxAttempts) {
          retry.push(entry);
        } else {
          failed.push({
            event: entry.event,
            index: entry.index,
            code: failure.Code ?? 'Unknown',
            message: failure.Message ?? '',
            senderFault,
            attempts: attempt,
          });
        }
      }
      // An entry the answer does not mention was not sent: treat it as a service-side failure.
      for (const entry of byId.values()) {
        if (attempt < options.maxAttempts) retry.push(entry);
        else failed.push(unanswered(entry, attempt));
      }
      pending = retry.sort((a, b) => a.index - b.index);
      if (pending.length > 0) await pause(options.retryDelayMs, attempt);
    }
  }
  sent.sort((a, b) => a.index - b.index);
  failed.sort((a, b) => a.index - b.index);
  return { sent, failed };
}

/** Batches of at most 10 entries and 256 KiB, in order (an entry over the limit goes alone). */
function cut<T>(entries: readonly OutgoingEntry<T>[]): OutgoingEntry<T>[][] {
  const batches: OutgoingEntry<T>[][] = [];
  let batch: OutgoingEntry<T>[] = [];
  let bytes = 0;
  for (const entry of entries) {
    if (batch.length > 0 && (batch.length === MAX_ENTRIES || bytes + entry.size > MAX_BATCH_BYTES)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(entry);
    bytes += entry.size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** One call; a call that fails whole fails each of its entries, retryable or not as the error says. */
async function call<T>(
  sendBatch: (entries: Array<OutgoingEntry<T>['entry']>) => Promise<BatchAnswer>,
  pending: readonly OutgoingEntry<T>[],
): Promise<BatchAnswer> {
  try {
    return await sendBatch(pending.map((entry) => entry.entry));
  } catch (error) {
    const code = (error as { name?: string })?.name ?? 'Error';
    const message = (error as Error)?.message ?? String(error);
    const senderFault = !isRetryable(error);
    return {
      Failed: pending.map((entry) => ({
        Id: entry.entry.Id,
        Code: code,
        Message: message,
        SenderFault: senderFault,
      })),
    };
  }
}

/** Throttling, server errors and network failures may pass later; a client error will not. */
function isRetryable(error: unknown): boolean {
  const details = error as {
    $retryable?: unknown;
    $fault?: unknown;
    name?: unknown;
    $metadata?: unknown;
  } | null;
  if (details?.$retryable) return true;
  if (details?.$fault === 'server') return true;
  if (typeof details?.name === 'string' && /throttl|toomanyrequests|requestlimitexceeded/i.test(details.name))
    return true;
  // No answer from the service at all (connection reset, timeout): it may not have seen the call.
  return details?.$fault === undefined && details?.$metadata === undefined;
}

function unanswered<T>(entry: OutgoingEntry<T>, attempts: number): SqsSendFailure<T> {
  return {
    event: entry.event,
    index: entry.index,
    code: 'NoAnswer',
    message: 'the service answered neither success nor failure for this entry',
    senderFault: false,
    attempts,
  };
}

function pause(baseMs: number, attempt: number): Promise<void> {
  const ceiling = baseMs * 2 ** (attempt - 1);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
}
