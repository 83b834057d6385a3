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

type Success = { Id?: string; MessageId?: string; SequenceNumber?: string };
type Failure = { Id?: string; Code?: string; Message?: string; SenderFault?: boolean };

/** What `SendMessageBatch` and `PublishBatch` answer. */
export interface BatchAnswer {
  Successful?: Success[];
  Failed?: Failure[];
}

/** One call of the batch API with these entries. */
export type SendBatch<T> = (entries: Array<OutgoingEntry<T>['entry']>) => Promise<BatchAnswer>;

/** An entry the answer does not mention was not sent: a service-side failure. */
const NO_ANSWER: Failure = {
  Code: 'NoAnswer',
  Message: 'the service answered neither success nor failure for this entry',
  SenderFault: false,
};

const MAX_ENTRIES = 10;
const MAX_BATCH_BYTES = 262_144;

export async function sendInBatches<T>(
  entries: readonly OutgoingEntry<T>[],
  sendBatch: SendBatch<T>,
  options: { maxAttempts: number; retryDelayMs: number },
): Promise<{ sent: SqsSentMessage<T>[]; failed: SqsSendFailure<T>[] }> {
  const sent: SqsSentMessage<T>[] = [];
  const failed: SqsSendFailure<T>[] = [];
  for (const batch of cut(entries)) {
    let pending = batch;
    for (let attempt = 1; pending.length > 0; attempt++) {
      const answer = await call(sendBatch, pending);
      const succeeded = new Map((answer.Successful ?? []).map((success) => [success.Id, success]));
      const refused = new Map((answer.Failed ?? []).map((failure) => [failure.Id, failure]));
      const retry: OutgoingEntry<T>[] = [];
      for (const entry of pending) {
        const { index, event } = entry;
        const success = succeeded.get(entry.entry.Id);
        if (success) {
          const { MessageId: messageId = '', SequenceNumber: sequenceNumber } = success;
          sent.push({ event, index, messageId, ...(sequenceNumber === undefined ? {} : { sequenceNumber }) });
          continue;
        }
        const result = refused.get(entry.entry.Id) ?? NO_ANSWER;
        const senderFault = result.SenderFault !== false;
        if (!senderFault && attempt < options.maxAttempts) retry.push(entry);
        else {
          const { Code: code = 'Unknown', Message: message = '' } = result;
          failed.push({ event, index, code, message, senderFault, attempts: attempt });
        }
      }
      pending = retry;
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
async function call<T>(sendBatch: SendBatch<T>, pending: readonly OutgoingEntry<T>[]): Promise<BatchAnswer> {
  try {
    return await sendBatch(pending.map((entry) => entry.entry));
  } catch (error) {
    const failure: Failure = {
      Code: (error as { name?: string })?.name ?? 'Error',
      Message: (error as Error)?.message ?? String(error),
      SenderFault: !isRetryable(error),
    };
    return { Failed: pending.map((entry) => ({ ...failure, Id: entry.entry.Id })) };
  }
}

/** Throttling, server errors and network failures may pass later; a client error will not. */
function isRetryable(error: unknown): boolean {
  const { $retryable, $fault, $metadata, name } = (error ?? {}) as Record<string, unknown>;
  if ($retryable || $fault === 'server') return true;
  if (typeof name === 'string' && /throttl|toomanyrequests|requestlimitexceeded/i.test(name)) return true;
  // No answer from the service at all (connection reset, timeout): it may not have seen the call.
  return $fault === undefined && $metadata === undefined;
}

function pause(baseMs: number, attempt: number): Promise<void> {
  const ceiling = baseMs * 2 ** (attempt - 1);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
}
