import { InvalidSqsMessageError, SqsFifoOrderError, SqsRecordTimeoutError } from '../sqs-message.errors';
import type { ResolvedSqsDispatchOptions } from '../sqs-module-options.interface';
import type { SqsRecordLike } from '../sqs-record.interface';
import { isFailedStatus, SqsRecordResult } from '../../idempotency/record-outcome';

/**
 * The batch rules, for every host: a standard queue runs records concurrently (`concurrency` at a
 * time); FIFO `isolate_groups` runs groups side by side, each in order, failing the rest of a group
 * after a failure; `halt_batch` runs in order and fails everything after a failure. Skips and
 * duplicates are successes; a FIFO record without a group is invalid; a record past `recordTimeoutMs`
 * fails (its handler runs on, its claim held). `processRecord` must not throw.
 */
export interface SqsBatchRules extends Pick<ResolvedSqsDispatchOptions, 'fifoFailureMode' | 'concurrency'> {
  queue: string;
  fifo: boolean;
  /** Milliseconds after which a record still running fails. Default: none. */
  recordTimeoutMs?: number;
}

/**
 * Builds the result of a record the rules fail: one not processed (behind a FIFO failure, without a
 * group), or one still being processed past `recordTimeoutMs`, the only case in which `processRecord`
 * was called for it. `index`: its place in the batch, as `processRecord` had it.
 */
export type RejectRecord = (
  record: SqsRecordLike,
  error: Error,
  status: 'FAILED' | 'INVALID',
  index: number,
) => SqsRecordResult;

export async function processSqsBatch(
  records: readonly SqsRecordLike[],
  rules: SqsBatchRules,
  processRecord: (record: SqsRecordLike, index: number) => Promise<SqsRecordResult>,
  rejectRecord: RejectRecord,
): Promise<SqsRecordResult[]> {
  const timeoutMs = rules.recordTimeoutMs;
  if (timeoutMs !== undefined && timeoutMs > 0) {
    const untimed = processRecord;
    processRecord = (record, index) =>
      withTimeout(untimed(record, index), timeoutMs, record, index, rules, rejectRecord);
  }
  const results = new Array<SqsRecordResult>(records.length);
  if (!rules.fifo) {
    await runBounded(
      records.length,
      rules.concurrency,
      (index) => processRecord(records[index], index),
      (index, result) => (results[index] = result),
    );
    return results;
  }
  if (rules.fifoFailureMode === 'halt_batch') {
    await runInOrder(records, [...records.keys()], rules, processRecord, rejectRecord, results);
    return results;
  }
  // Records without a group are failed at once; each group is a lane, run in order.
  const groups = new Map<string, number[]>();
  records.forEach((record, index) => {
    const group = record?.attributes?.MessageGroupId;
    if (group === undefined || group === '')
      results[index] = missingGroup(record, index, rules.queue, rejectRecord);
    else if (groups.has(group)) groups.get(group)!.push(index);
    else groups.set(group, [index]);
  });
  const lanes = [...groups.values()];
  await runBounded(lanes.length, rules.concurrency, (lane) =>
    runInOrder(records, lanes[lane], rules, processRecord, rejectRecord, results),
  );
  return results;
}

/** Runs the records at `order` one by one; after a failure, fails the rest unattempted. */
async function runInOrder(
  records: readonly SqsRecordLike[],
  order: readonly number[],
  rules: SqsBatchRules,
  processRecord: (record: SqsRecordLike, index: number) => Promise<SqsRecordResult>,
  rejectRecord: RejectRecord,
  results: SqsRecordResult[],
): Promise<void> {
  let failedId: string | undefined;
  for (const index of order) {
    const record = records[index];
    if (failedId !== undefined) {
      results[index] = rejectRecord(
        record,
        new SqsFifoOrderError(messageIdOf(record), failedId, rules.fifoFailureMode),
        'FAILED',
        index,
      );
      continue;
    }
    const group = record?.attributes?.MessageGroupId;
    results[index] = group
      ? await processRecord(record, index)
      : missingGroup(record, index, rules.queue, rejectRecord);
    if (isFailedStatus(results[index].status)) failedId = results[index].messageId || '(no messageId)';
  }
}

/** Runs `count` tasks, `limit` at a time; the lanes call the tasks themselves (no wrapping promise per record). */
async function runBounded<T>(
  count: number,
  limit: number,
  task: (index: number) => Promise<T>,
  done?: (index: number, value: T) => void,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      const value = await task(index);
      done?.(index, value);
    }
  };
  const lanes: Promise<void>[] = [];
  for (let i = Math.min(limit, count); i > 0; i--) lanes.push(lane());
  await Promise.all(lanes);
}

/** The record's result, or a failure once `timeoutMs` has passed (the record itself runs on). */
function withTimeout(
  running: Promise<SqsRecordResult>,
  timeoutMs: number,
  record: SqsRecordLike,
  index: number,
  rules: SqsBatchRules,
  rejectRecord: RejectRecord,
): Promise<SqsRecordResult> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<SqsRecordResult>((resolve) => {
    const error = () => new SqsRecordTimeoutError(messageIdOf(record), rules.queue, timeoutMs);
    timer = setTimeout(() => resolve(rejectRecord(record, error(), 'FAILED', index)), timeoutMs);
  });
  return Promise.race([running, timedOut]).finally(() => clearTimeout(timer));
}

function missingGroup(
  record: SqsRecordLike,
  index: number,
  queue: string,
  rejectRecord: RejectRecord,
): SqsRecordResult {
  const reason = 'a record of a FIFO queue has no MessageGroupId attribute';
  return rejectRecord(
    record,
    new InvalidSqsMessageError(messageIdOf(record), queue, reason),
    'INVALID',
    index,
  );
}

/** The record's `messageId`, or `''` for a record without one. */
export function messageIdOf(record: SqsRecordLike): string {
  return typeof record?.messageId === 'string' ? record.messageId : '';
}
