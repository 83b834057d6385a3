import { processSqsBatch as runBatch, RejectRecord, SqsBatchRules } from './sqs-batch.rules';
import { InvalidSqsMessageError, SqsFifoOrderError } from '../sqs-message.errors';
import type { SqsRecordLike } from '../sqs-record.interface';
import type { SqsRecordResult, SqsRecordStatus } from '../../idempotency/record-outcome';

/**
 * The batch rules alone, with a scripted `processRecord`: which records run, in which order, how
 * many at once, and what the ones not run come back as. The hosts' e2e specs (test/sqs-batch) run
 * the same rules through a Nest app.
 */

const STANDARD: SqsBatchRules = {
  queue: 'orders',
  fifo: false,
  fifoFailureMode: 'isolate_groups',
  concurrency: 2,
};
const ISOLATE: SqsBatchRules = { ...STANDARD, queue: 'orders.fifo', fifo: true, concurrency: 10 };
const HALT: SqsBatchRules = { ...ISOLATE, fifoFailureMode: 'halt_batch' };

/** A record whose body is the status its processing answers ("OK", "FAILED", ...); `group` for FIFO. */
function record(id: string, status: SqsRecordStatus = 'OK', group?: string): SqsRecordLike {
  return { messageId: id, body: status, attributes: group === undefined ? {} : { MessageGroupId: group } };
}

/** Processes records by their body, recording the order they started in and how many ran at once. */
function scripted(options: { holdMs?: number } = {}) {
  const started: string[] = [];
  const indexes: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const processRecord = async (rec: SqsRecordLike, index: number): Promise<SqsRecordResult> => {
    started.push(rec.messageId);
    indexes.push(index);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((resolve) => setTimeout(resolve, options.holdMs ?? 1));
    inFlight--;
    return { messageId: rec.messageId, status: rec.body as SqsRecordStatus, durationMs: 1 };
  };
  return { processRecord, started, indexes, maxInFlight: () => maxInFlight };
}

/** The result the pipeline gives a record the rules fail unrun, without its log and counters. */
const rejectAsResult: RejectRecord = (rec, error, status) => ({
  messageId: typeof rec?.messageId === 'string' ? rec.messageId : '',
  status,
  error,
  durationMs: 0,
});

/** The batch rules with `rejectAsResult` unless a test gives its own. */
function processSqsBatch(
  records: readonly SqsRecordLike[],
  rules: SqsBatchRules,
  processRecord: (rec: SqsRecordLike, index: number) => Promise<SqsRecordResult>,
  rejectRecord: RejectRecord = rejectAsResult,
): Promise<SqsRecordResult[]> {
  return runBatch(records, rules, processRecord, rejectRecord);
}

const statuses = (results: SqsRecordResult[]) => results.map((result) => result.status);

describe('processSqsBatch: standard queue', () => {
  it('runs every record, at most `concurrency` at a time, and answers in input order', async () => {
    const run = scripted({ holdMs: 5 });
    const records = ['a', 'b', 'c', 'd', 'e'].map((id) => record(id));
    const results = await processSqsBatch(records, { ...STANDARD, concurrency: 2 }, run.processRecord);
    expect(results.map((result) => result.messageId)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(run.maxInFlight()).toBe(2);
    expect([...run.started].sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect([...run.indexes].sort()).toEqual([0, 1, 2, 3, 4]);
  });

  it('runs them all at once when concurrency exceeds the batch', async () => {
    const run = scripted({ holdMs: 5 });
    await processSqsBatch(
      [record('a'), record('b'), record('c')],
      { ...STANDARD, concurrency: 10 },
      run.processRecord,
    );
    expect(run.maxInFlight()).toBe(3);
  });

  it('a failure affects only its own record', async () => {
    const run = scripted();
    const results = await processSqsBatch(
      [record('a'), record('b', 'FAILED'), record('c', 'INVALID'), record('d')],
      STANDARD,
      run.processRecord,
    );
    expect(statuses(results)).toEqual(['OK', 'FAILED', 'INVALID', 'OK']);
    expect(run.started).toHaveLength(4);
  });

  it('does not need MessageGroupId', async () => {
    const results = await processSqsBatch([record('a')], STANDARD, scripted().processRecord);
    expect(statuses(results)).toEqual(['OK']);
  });

  it('answers an empty batch with no results', async () => {
    const run = scripted();
    expect(await processSqsBatch([], STANDARD, run.processRecord)).toEqual([]);
    expect(await processSqsBatch([], ISOLATE, run.processRecord)).toEqual([]);
    expect(await processSqsBatch([], HALT, run.processRecord)).toEqual([]);
    expect(run.started).toEqual([]);
  });
});

describe('processSqsBatch: FIFO isolate_groups', () => {
  it('runs the groups side by side and each group one record at a time, in order', async () => {
    const run = scripted({ holdMs: 5 });
    const records = [
      record('a1', 'OK', 'A'),
      record('b1', 'OK', 'B'),
      record('a2', 'OK', 'A'),
      record('b2', 'OK', 'B'),
    ];
    const results = await processSqsBatch(records, ISOLATE, run.processRecord);
    expect(statuses(results)).toEqual(['OK', 'OK', 'OK', 'OK']);
    expect(run.started.filter((id) => id.startsWith('a'))).toEqual(['a1', 'a2']);
    expect(run.started.filter((id) => id.startsWith('b'))).toEqual(['b1', 'b2']);
    expect(run.maxInFlight()).toBe(2); // one per group
    expect(run.indexes.filter((_, i) => run.started[i] === 'a2')).toEqual([2]); // the batch index, not the lane's
  });

  it('runs at most `concurrency` groups at once', async () => {
    const run = scripted({ holdMs: 5 });
    const records = ['A', 'B', 'C', 'D'].map((group) => record(group, 'OK', group));
    await processSqsBatch(records, { ...ISOLATE, concurrency: 3 }, run.processRecord);
    expect(run.maxInFlight()).toBe(3);
  });

  it.each(['FAILED', 'INVALID', 'IN_PROGRESS'] as const)(
    'a %s record fails the rest of its group unattempted; other groups go on',
    async (status) => {
      const run = scripted();
      const records = [
        record('a1', 'OK', 'A'),
        record('a2', status, 'A'),
        record('b1', 'OK', 'B'),
        record('a3', 'OK', 'A'),
        record('a4', 'OK', 'A'),
        record('b2', 'OK', 'B'),
      ];
      const results = await processSqsBatch(records, ISOLATE, run.processRecord);
      expect(statuses(results)).toEqual(['OK', status, 'OK', 'FAILED', 'FAILED', 'OK']);
      expect(run.started).not.toContain('a3');
      expect(run.started).not.toContain('a4');
      for (const blocked of [results[3], results[4]]) {
        expect(blocked.error).toBeInstanceOf(SqsFifoOrderError);
        expect(blocked.durationMs).toBe(0);
      }
      expect(results[3].messageId).toBe('a3');
      expect(results[3].error?.message).toBe(
        "Message a3 was not attempted: message a2 before it failed and fifoFailureMode is 'isolate_groups'; " +
          'it is redelivered in order.',
      );
    },
  );

  it.each(['SKIPPED', 'DUPLICATE'] as const)(
    'a %s record is a success: its group goes on',
    async (status) => {
      const run = scripted();
      const results = await processSqsBatch(
        [record('a1', status, 'A'), record('a2', 'OK', 'A')],
        ISOLATE,
        run.processRecord,
      );
      expect(statuses(results)).toEqual([status, 'OK']);
      expect(run.started).toEqual(['a1', 'a2']);
    },
  );

  it('a record without MessageGroupId (absent or empty) fails as invalid; the others go on', async () => {
    const run = scripted();
    const noGroup: SqsRecordLike = { messageId: 'x', body: 'OK' };
    const results = await processSqsBatch(
      [noGroup, record('e', 'OK', ''), record('a1', 'OK', 'A')],
      ISOLATE,
      run.processRecord,
    );
    expect(statuses(results)).toEqual(['INVALID', 'INVALID', 'OK']);
    expect(run.started).toEqual(['a1']);
    expect(results[0]).toMatchObject({ messageId: 'x', durationMs: 0 });
    expect(results[0].error).toBeInstanceOf(InvalidSqsMessageError);
    expect(results[0].error?.message).toBe(
      'Message x on queue "orders.fifo" is invalid: a record of a FIFO queue has no MessageGroupId attribute. ' +
        'It was not handled and will reach the dead-letter queue after maxReceiveCount receives; fix the ' +
        'producer or the event class, then redrive it.',
    );
  });

  it('names a failed record without a messageId as such in the records it blocks', async () => {
    const run = scripted();
    const results = await processSqsBatch(
      [record('', 'FAILED', 'A'), record('a2', 'OK', 'A')],
      ISOLATE,
      run.processRecord,
    );
    expect(results[1].error?.message).toContain('message (no messageId) before it failed');
  });
});

describe('processSqsBatch: FIFO halt_batch', () => {
  it('runs the records one by one in batch order, whatever their group', async () => {
    const run = scripted({ holdMs: 3 });
    const records = [record('a1', 'OK', 'A'), record('b1', 'OK', 'B'), record('a2', 'OK', 'A')];
    expect(statuses(await processSqsBatch(records, HALT, run.processRecord))).toEqual(['OK', 'OK', 'OK']);
    expect(run.started).toEqual(['a1', 'b1', 'a2']);
    expect(run.indexes).toEqual([0, 1, 2]);
    expect(run.maxInFlight()).toBe(1);
  });

  it('after a failure, fails every later record unattempted, naming the mode', async () => {
    const run = scripted();
    const records = [
      record('a1', 'OK', 'A'),
      record('b1', 'FAILED', 'B'),
      record('a2', 'OK', 'A'),
      record('c1', 'OK', 'C'),
    ];
    const results = await processSqsBatch(records, HALT, run.processRecord);
    expect(statuses(results)).toEqual(['OK', 'FAILED', 'FAILED', 'FAILED']);
    expect(run.started).toEqual(['a1', 'b1']);
    expect(results[3].error?.message).toBe(
      "Message c1 was not attempted: message b1 before it failed and fifoFailureMode is 'halt_batch'; " +
        'it is redelivered in order.',
    );
  });

  it('a record without MessageGroupId is invalid and halts what follows', async () => {
    const run = scripted();
    const results = await processSqsBatch(
      [record('a1', 'OK', 'A'), record('x'), record('a2', 'OK', 'A')],
      HALT,
      run.processRecord,
    );
    expect(statuses(results)).toEqual(['OK', 'INVALID', 'FAILED']);
    expect(results[1].error).toBeInstanceOf(InvalidSqsMessageError);
    expect(results[2].error?.message).toContain('message x before it failed');
    expect(run.started).toEqual(['a1']);
  });

  it('skipped and duplicate records do not halt it', async () => {
    const run = scripted();
    const records = [record('a', 'SKIPPED', 'A'), record('b', 'DUPLICATE', 'B'), record('c', 'OK', 'C')];
    expect(statuses(await processSqsBatch(records, HALT, run.processRecord))).toEqual([
      'SKIPPED',
      'DUPLICATE',
      'OK',
    ]);
  });
});

describe('processSqsBatch: records that are not records', () => {
  it.each([
    ['isolate_groups', ISOLATE],
    ['halt_batch', HALT],
  ] as const)(
    '%s: a null record fails as invalid without a messageId, and the batch goes on',
    async (_, rules) => {
      const run = scripted();
      const results = await processSqsBatch(
        [null as unknown as SqsRecordLike, record('b1', 'OK', 'B')],
        rules,
        run.processRecord,
      );
      expect(results[0]).toMatchObject({ messageId: '', status: 'INVALID' });
      expect(results[1].status).toBe(rules.fifoFailureMode === 'halt_batch' ? 'FAILED' : 'OK');
    },
  );

  it('isolate_groups: several records with an empty MessageGroupId are each invalid, not one group', async () => {
    const run = scripted();
    const results = await processSqsBatch(
      [record('e1', 'OK', ''), record('e2', 'OK', ''), record('e3', 'OK', '')],
      ISOLATE,
      run.processRecord,
    );
    expect(statuses(results)).toEqual(['INVALID', 'INVALID', 'INVALID']);
    for (const result of results) expect(result.error).toBeInstanceOf(InvalidSqsMessageError);
  });
});

describe('processSqsBatch: rejectRecord', () => {
  it('builds the result of every record the rules fail without running it, with its batch index', async () => {
    const calls: Array<[string, string, string, number]> = [];
    const reject: RejectRecord = (rec, error, status, index) => {
      calls.push([rec.messageId, error.name, status, index]);
      return { messageId: rec.messageId, status, error, durationMs: 0, eventType: 'custom' };
    };
    const results = await processSqsBatch(
      [record('x'), record('a1', 'FAILED', 'A'), record('a2', 'OK', 'A')],
      ISOLATE,
      scripted().processRecord,
      reject,
    );
    expect(calls).toEqual([
      ['x', 'InvalidSqsMessageError', 'INVALID', 0],
      ['a2', 'SqsFifoOrderError', 'FAILED', 2],
    ]);
    expect(results[2].eventType).toBe('custom');
  });

  it('by default keeps the messageId, or "" when the record has none that is a string', async () => {
    const odd = { messageId: 42, body: 'OK' } as unknown as SqsRecordLike;
    const results = await processSqsBatch([odd], ISOLATE, scripted().processRecord);
    expect(results[0]).toMatchObject({ messageId: '', status: 'INVALID', durationMs: 0 });
    expect(results[0].error?.message).toContain('Message (no messageId) on queue "orders.fifo" is invalid');
  });
});
