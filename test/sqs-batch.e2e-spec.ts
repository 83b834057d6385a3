import { Injectable } from '@nestjs/common';
import { IsIn, IsString } from 'class-validator';
import { AcquireResult } from '../lib/stores';
import { IdempotencyStats } from '../lib/center';
import { Idempotent, SkipMessageException, SqsEvent, SqsMessageHandler, SqsModuleOptions } from '../lib';
import { buildSqsRecord } from '../lib/testing';
import { UNKNOWN_EVENT_TYPE } from '../lib/idempotency/record-observer';
import { RecordingStore } from './support/recording-store';
import { waitFor } from './support/wait-for';
import { createTestApp, TestApp } from './support/test-app';

/** The batch rules: standard queues concurrent and bounded; FIFO order per group in both failure modes. */

@SqsEvent('step')
class Step {
  @IsString() id!: string;
  @IsString() name!: string;
  @IsIn(['ok', 'fail', 'skip', 'slow', 'hold']) action!: string;
}

@Injectable()
class Steps {
  readonly ran: string[] = [];
  /** What a 'hold' step waits for. */
  gate: Promise<void> = Promise.resolve();
  inFlight = 0;
  maxInFlight = 0;

  @SqsMessageHandler(Step)
  @Idempotent()
  async onStep(step: Step): Promise<void> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (step.action === 'hold') await this.gate;
      await new Promise((resolve) => setTimeout(resolve, step.action === 'slow' ? 20 : 2));
      this.ran.push(step.name);
      if (step.action === 'fail') throw new Error(`${step.name} failed`);
      if (step.action === 'skip') throw new SkipMessageException(`${step.name} skipped`);
    } finally {
      this.inFlight--;
    }
  }
}

let counter = 0;
const step = (name: string, action = 'ok') => ({ id: `${name}-${++counter}`, name, action });

describe('batch rules', () => {
  let app: TestApp;
  const store = new RecordingStore();
  afterEach(() => app.close());

  async function start(sqs: SqsModuleOptions = {}) {
    app = await createTestApp({ sqs, providers: [Steps] });
    return app.get(Steps);
  }

  it('standard queue: records run concurrently, never more than `concurrency` at once', async () => {
    const steps = await start({ concurrency: 3 });
    const { statuses } = await app.sqs.sendBatch(Array.from({ length: 12 }, (_, i) => step(`s${i}`, 'slow')));
    expect(statuses).toEqual(Array(12).fill('OK'));
    expect(steps.maxInFlight).toBe(3);
  });

  it('standard queue: a failure affects only its record', async () => {
    await start();
    const { statuses, response, records } = await app.sqs.sendBatch([
      step('a'),
      step('b', 'fail'),
      step('c'),
    ]);
    expect(statuses).toEqual(['OK', 'FAILED', 'OK']);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: records[1].messageId }]);
  });

  it('a batch in which every record fails lists every id (the invocation does not throw)', async () => {
    await start();
    const { response, records } = await app.sqs.sendBatch([step('a', 'fail'), 'garbage', step('c', 'fail')]);
    expect(response.batchItemFailures).toEqual(
      records.map((record) => ({ itemIdentifier: record.messageId })),
    );
  });

  it('FIFO isolate_groups (default): a failure fails the rest of its group unattempted; other groups go on, in order', async () => {
    const steps = await start();
    const { statuses, results, records, response } = await app.sqs.sendBatch(
      [step('a1'), step('b1'), step('a2', 'fail'), step('b2'), step('a3'), step('b3')],
      { fifo: true, groups: ['A', 'B', 'A', 'B', 'A', 'B'] },
    );
    expect(statuses).toEqual(['OK', 'OK', 'FAILED', 'OK', 'FAILED', 'OK']);
    expect(results[4].error?.name).toBe('SqsFifoOrderError');
    expect(results[4].error?.message).toContain(`message ${records[2].messageId} before it failed`);
    expect(steps.ran.filter((name) => name.startsWith('a'))).toEqual(['a1', 'a2']);
    expect(steps.ran.filter((name) => name.startsWith('b'))).toEqual(['b1', 'b2', 'b3']);
    expect(response.batchItemFailures.map((failure) => failure.itemIdentifier)).toEqual([
      records[2].messageId,
      records[4].messageId,
    ]);
  });

  it('FIFO: records of one group run one at a time, in order', async () => {
    const steps = await start({ concurrency: 10 });
    await app.sqs.sendBatch([step('x1', 'slow'), step('x2'), step('x3', 'slow'), step('x4')], { fifo: true });
    expect(steps.ran).toEqual(['x1', 'x2', 'x3', 'x4']);
    expect(steps.maxInFlight).toBe(1);
  });

  it('FIFO halt_batch: a failure fails every later record of the batch, whatever its group', async () => {
    const steps = await start({ fifoFailureMode: 'halt_batch' });
    const { statuses } = await app.sqs.sendBatch([step('a1'), step('b1', 'fail'), step('a2'), step('c1')], {
      fifo: true,
      groups: ['A', 'B', 'A', 'C'],
    });
    expect(statuses).toEqual(['OK', 'FAILED', 'FAILED', 'FAILED']);
    expect(steps.ran).toEqual(['a1', 'b1']);
  });

  it.each(['isolate_groups', 'halt_batch'] as const)(
    'FIFO %s: skipped and duplicate records are successes and never halt anything',
    async (mode) => {
      const steps = await start({ fifoFailureMode: mode });
      const first = step('d1');
      await app.sqs.sendBatch([first], { fifo: true });
      const { statuses, response } = await app.sqs.sendBatch([step('s1', 'skip'), first, step('after')], {
        fifo: true,
      });
      expect(statuses).toEqual(['SKIPPED', 'DUPLICATE', 'OK']);
      expect(response.batchItemFailures).toEqual([]);
      expect(steps.ran).toEqual(['d1', 's1', 'after']);
    },
  );

  it.each(['isolate_groups', 'halt_batch'] as const)(
    'FIFO %s: an invalid record halts its group like a failure (the later record would overtake it)',
    async (mode) => {
      const steps = await start({ fifoFailureMode: mode });
      const invalid = { ...step('bad'), action: 'not-an-action' };
      const { statuses, results, records, response } = await app.sqs.sendBatch(
        [step('b1'), invalid, step('a2'), step('b2')],
        { fifo: true, groups: ['B', 'A', 'A', 'B'] },
      );
      // a2 must wait for the invalid record's redelivery (or its dead-letter queue), not run before it.
      expect(statuses).toEqual(['OK', 'INVALID', 'FAILED', mode === 'halt_batch' ? 'FAILED' : 'OK']);
      expect(results[2].error?.name).toBe('SqsFifoOrderError');
      expect(results[2].error?.message).toContain(`message ${records[1].messageId} before it failed`);
      expect(steps.ran).toEqual(mode === 'halt_batch' ? ['b1'] : ['b1', 'b2']);
      expect(response.batchItemFailures.map((failure) => failure.itemIdentifier)).toEqual(
        records.slice(1, mode === 'halt_batch' ? 4 : 3).map((record) => record.messageId),
      );
    },
  );

  it('counts every record, also those no handler ran: invalid under their type, unattempted under (unknown)', async () => {
    app = await createTestApp({ idempotency: { stats: {} }, providers: [Steps] });
    await app.sqs.sendBatch([step('b1'), { ...step('bad'), action: 'nope' }, step('a2'), 'garbage'], {
      fifo: true,
      groups: ['B', 'A', 'A', 'C'],
    });
    const snapshot = await app.get(IdempotencyStats).snapshot();
    const totalsOf = (type: string) => snapshot.eventTypes.find((stats) => stats.eventType === type)?.totals;
    expect(totalsOf('step')).toMatchObject({ handled: 1, invalid: 1, failed: 0 });
    // a2, failed unattempted behind the invalid record, and the body that is not JSON.
    expect(totalsOf(UNKNOWN_EVENT_TYPE)).toMatchObject({ failed: 1, invalid: 1 });
    expect(snapshot.totals).toMatchObject({ handled: 1, invalid: 2, failed: 1 });
  });

  it('FIFO: an in-flight duplicate halts its group (it must run after the first copy)', async () => {
    app = await createTestApp({ idempotency: { store }, providers: [Steps] });
    const steps = app.get(Steps);
    let release!: () => void;
    steps.gate = new Promise<void>((resolve) => (release = resolve));
    const dup = step('dup', 'hold');
    const batch = app.sqs.sendBatch([dup, step('other'), dup, step('later')], {
      fifo: true,
      groups: ['A', 'B', 'B', 'B'],
    });
    // Group A holds the claim until group B has met it in flight.
    await waitFor(() => store.calls.some((call) => call.answer === AcquireResult.IN_PROGRESS));
    release();
    const { statuses } = await batch;
    expect(statuses).toEqual(['OK', 'OK', 'IN_PROGRESS', 'FAILED']);
    expect(steps.ran).toEqual(['other', 'dup']);
  });

  it('a FIFO record without MessageGroupId fails as invalid, the others go on', async () => {
    await start();
    const grouped = buildSqsRecord({ type: 'step', ...step('g') }, { queue: 'q.fifo', groupId: 'G' });
    const ungrouped = buildSqsRecord({ type: 'step', ...step('u') }, { queue: 'q.fifo' });
    const { statuses, results } = await app.sqs.sendRecords([ungrouped, grouped]);
    expect(statuses).toEqual(['INVALID', 'OK']);
    expect(results[0].error?.message).toContain('a record of a FIFO queue has no MessageGroupId attribute');
  });

  it('an empty batch is answered with no failures', async () => {
    await start();
    expect((await app.sqs.sendRecords([])).response).toEqual({ batchItemFailures: [] });
  });
});
