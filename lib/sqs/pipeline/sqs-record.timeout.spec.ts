import { processSqsBatch, SqsBatchRules } from './sqs-batch.rules';
import { TimedRecord, timedOutResult, withRecordTimeout } from './sqs-record.timeout';
import { SqsFifoOrderError, SqsRecordTimeoutError } from '../sqs-message.errors';
import type { SqsRecordLike } from '../sqs-record.interface';
import type { SqsRecordResult } from '../../idempotency/record-outcome';

/**
 * A record's timeout alone (the polling host's `handleMessageTimeout`), under the batch rules, with a
 * scripted processing; test/record-timeout.e2e-spec.ts runs it through a polling app on Redis.
 */

const STANDARD: SqsBatchRules = {
  queue: 'orders',
  fifo: false,
  fifoFailureMode: 'isolate_groups',
  concurrency: 2,
};
const ISOLATE: SqsBatchRules = { ...STANDARD, queue: 'orders.fifo', fifo: true, concurrency: 10 };

function record(id: string, group?: string): SqsRecordLike {
  return { messageId: id, body: '{}', attributes: group === undefined ? {} : { MessageGroupId: group } };
}

/** Processing where the record `slow` never ends until `release()`: a handler outliving its timeout. */
function hanging() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const processed: number[] = [];
  const processRecord = async (rec: SqsRecordLike, index: number): Promise<SqsRecordResult> => {
    processed.push(index);
    if (rec.messageId.startsWith('slow')) await gate;
    return { messageId: rec.messageId, status: 'OK', durationMs: 1 };
  };
  return { processRecord, release, processed };
}

/** What the pipeline answers for a timed-out record, without its log and counters; the calls it got. */
function timedOutAsResult() {
  const calls: Array<[string, string, number]> = [];
  const timedOut = (rec: SqsRecordLike, error: Error, index: number): SqsRecordResult => {
    calls.push([rec.messageId, error.name, index]);
    return { messageId: rec.messageId, status: 'FAILED', error, durationMs: 0 };
  };
  return { timedOut, calls };
}

const unreachable = () => {
  throw new Error('no record is rejected unrun here');
};

describe('withRecordTimeout under the batch rules', () => {
  it('fails a record still running after the timeout, with its index, and leaves the others their own result', async () => {
    const { processRecord, release, processed } = hanging();
    const { timedOut, calls } = timedOutAsResult();
    const started = Date.now();
    const results = await processSqsBatch(
      [record('quick'), record('slow')],
      STANDARD,
      withRecordTimeout(processRecord, 'orders', 30, timedOut),
      unreachable,
    );
    release();
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(results.map((result) => result.status)).toEqual(['OK', 'FAILED']);
    expect(calls).toEqual([['slow', 'SqsRecordTimeoutError', 1]]);
    expect(processed).toEqual([0, 1]);
    expect(results[1].error).toBeInstanceOf(SqsRecordTimeoutError);
    expect(results[1].error?.message).toContain('Message slow on queue "orders" was not done after 30 ms');
  });

  it('in FIFO, a timed-out record halts its group', async () => {
    const { processRecord, release } = hanging();
    const results = await processSqsBatch(
      [record('slow-a1', 'A'), record('a2', 'A')],
      ISOLATE,
      withRecordTimeout(processRecord, 'orders.fifo', 20, timedOutAsResult().timedOut),
      (rec, error, status) => ({ messageId: rec.messageId, status, error, durationMs: 0 }),
    );
    release();
    expect(results.map((result) => result.status)).toEqual(['FAILED', 'FAILED']);
    expect(results[0].error).toBeInstanceOf(SqsRecordTimeoutError);
    expect(results[1].error).toBeInstanceOf(SqsFifoOrderError);
  });

  it('clears its timer once the record is done (nothing keeps the process alive)', async () => {
    jest.useFakeTimers();
    try {
      const { timedOut, calls } = timedOutAsResult();
      const done = processSqsBatch(
        [record('a')],
        STANDARD,
        withRecordTimeout(
          async (rec) => ({ messageId: rec.messageId, status: 'OK', durationMs: 0 }),
          'orders',
          60_000,
          timedOut,
        ),
        unreachable,
      );
      expect((await done).map((result) => result.status)).toEqual(['OK']);
      expect(jest.getTimerCount()).toBe(0);
      expect(calls).toEqual([]);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('timedOutResult', () => {
  it('fails the record with what it reached, counts its handler call FAILED once and ends its span once', () => {
    const timed = new TimedRecord(50);
    const ended: unknown[] = [];
    timed.span = { traceId: 'trace-1', end: (...args: unknown[]) => ended.push(args) } as never;
    timed.context = { eventType: 'OrderCreated', state: { idempotencyKey: 'k-1' } } as never;
    timed.handler = 'Orders.handle';
    timed.eventType = 'OrderCreated';
    timed.handlerContext = { state: { idempotencyOutcome: 'ACQUIRED' } } as never;
    const counted: unknown[][] = [];
    const sink = { observer: { countCall: (...args: unknown[]) => counted.push(args) } } as never;
    const error = new SqsRecordTimeoutError('m-1', 'orders', 50);
    const result = timedOutResult(timed, record('m-1'), error, sink);
    expect(timed.timedOut).toBe(true);
    expect(counted).toEqual([['OrderCreated', 'Orders.handle', 'FAILED', 'ACQUIRED', expect.any(Number)]]);
    expect(result).toMatchObject({
      messageId: 'm-1',
      status: 'FAILED',
      eventType: 'OrderCreated',
      key: 'k-1',
      error,
      traceId: 'trace-1',
    });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(ended).toHaveLength(1);
  });

  it('answers a record timed out before its decoding (no context yet) without an event type, key or handler call', () => {
    const counted: unknown[] = [];
    const sink = { observer: { countCall: (...args: unknown[]) => counted.push(args) } } as never;
    const result = timedOutResult(new TimedRecord(50), record('m-2'), new Error('late'), sink);
    expect(counted).toEqual([]); // no handler was called: the pipeline counts the record itself
    expect(result).toMatchObject({
      messageId: 'm-2',
      status: 'FAILED',
      eventType: undefined,
      key: undefined,
    });
  });
});
