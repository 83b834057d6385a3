import { InvalidSqsMessageError, SqsFifoOrderError } from '../sqs-message.errors';
import type { ResolvedSqsDispatchOptions } from '../sqs-module-options.interface';
import type { SqsRecordLike } from '../sqs-record.interface';
import { isFailedStatus, SqsRecordResult } from '../../idempotency/record-outcome';

/**
 * The batch rules, for every host: a standard queue runs records concurrently (`concurrency` at a
 * time); FIFO `isolate_groups` runs groups side by side, each in order, failing the rest of a group
 * after a failure; `halt_batch` runs in order and fails everything after a failure. Skips and
 * duplicates are successes; a FIFO record without a group is invalid. `processRecord` must not throw
 * (a record's timeout wraps it: `sqs-record.timeout.ts`).
 */
export interface SqsBatchRules extends Pick<ResolvedSqsDispatchOptions, 'fifoFailureMode' | 'concurrency'> {
  queue: string;
  fifo: boolean;
}

/**
 * Builds the result of a record the rules fail unprocessed (behind a FIFO failure, without a group).
 * `index`: its place in the batch, as `processRecord` would have had it.
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
  const { queue } = rules;
  const results = new Array<SqsRecordResult>(records.length);
  const run = (index: number) => processRecord(records[index], index);
  const missingGroup = (index: number) =>
    rejectRecord(
      records[index],
      new InvalidSqsMessageError(
        messageIdOf(records[index]),
        queue,
        'a record of a FIFO queue has no MessageGroupId attribute',
      ),
      'INVALID',
      index,
    );
  /** Runs the records at `order` one by one; after a failure, fails the rest unattempted. */
  const runInOrder = async (order: readonly number[]): Promise<void> => {
    let failedId: string | undefined;
    for (const index of order) {
      if (failedId !== undefined) {
        const error = new SqsFifoOrderError(messageIdOf(records[index]), failedId, rules.fifoFailureMode);
        results[index] = rejectRecord(records[index], error, 'FAILED', index);
        continue;
      }
      results[index] = records[index]?.attributes?.MessageGroupId ? await run(index) : missingGroup(index);
      if (isFailedStatus(results[index].status)) failedId = results[index].messageId || '(no messageId)';
    }
  };
  if (!rules.fifo) {
    await runBounded(records.length, rules.concurrency, run, (index, result) => (results[index] = result));
  } else if (rules.fifoFailureMode === 'halt_batch') {
    await runInOrder([...records.keys()]);
  } else {
    // Records without a group are failed at once; each group is a lane, run in order.
    const groups = new Map<string, number[]>();
    records.forEach((record, index) => {
      const group = record?.attributes?.MessageGroupId;
      if (group === undefined || group === '') results[index] = missingGroup(index);
      else if (groups.has(group)) groups.get(group)!.push(index);
      else groups.set(group, [index]);
    });
    const lanes = [...groups.values()];
    await runBounded(lanes.length, rules.concurrency, (lane) => runInOrder(lanes[lane]));
  }
  return results;
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

/** The record's `messageId`, or `''` for a record without one. */
export function messageIdOf(record: SqsRecordLike): string {
  return typeof record?.messageId === 'string' ? record.messageId : '';
}
