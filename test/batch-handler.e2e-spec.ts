import { Injectable, Module } from '@nestjs/common';
import { AcquireResult, BatchClaim, BatchCompletion } from '../lib/stores';
import {
  Idempotent,
  IdempotencyStore,
  InMemoryIdempotencyStore,
  SqsBatchHandler,
  SqsConfigurationError,
  SqsMessageHandler,
} from '../lib';
import { row, RowsLedger, RowsModule, RowWritten } from './fixtures/batch-handler-rows.fixture';
import { IdempotencyStats } from '../lib/center';
import { createTestApp, TestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

/**
 * `@SqsBatchHandler()` (issue 53) on SqsTestClient (the Lambda processor's path): a batch's new events
 * reach the handler in one call, in arrival order; every key is claimed in one turn (one
 * `tryAcquireMany`), succeeded ones completed in one `markCompleteMany`, failed ones released; duplicates,
 * in-flight copies and in-batch copies never reach it; each record ends with its own status.
 */

/** Counts the store's calls by method, and the entries of the batch ones. */
class CountingStore implements IdempotencyStore {
  readonly counts: Record<string, number> = {};
  readonly sizes: Record<string, number[]> = {};
  tryAcquireMany?: (claims: readonly BatchClaim[]) => Promise<AcquireResult[]>;
  markCompleteMany?: (completions: readonly BatchCompletion[]) => Promise<boolean[]>;

  constructor(
    readonly inner: InMemoryIdempotencyStore,
    batches = true,
  ) {
    if (!batches) return;
    this.tryAcquireMany = async (claims) => {
      this.count('tryAcquireMany', claims.length);
      return Promise.all(claims.map(({ key, ttlMs, token }) => inner.tryAcquire(key, ttlMs, token)));
    };
    this.markCompleteMany = async (completions) => {
      this.count('markCompleteMany', completions.length);
      return Promise.all(
        completions.map(
          async ({ key, ttlMs, token }) => (await inner.markComplete(key, ttlMs, token)) !== false,
        ),
      );
    };
  }

  private count(method: string, size = 1): void {
    this.counts[method] = (this.counts[method] ?? 0) + 1;
    (this.sizes[method] ??= []).push(size);
  }

  reset(): void {
    for (const key of Object.keys(this.counts)) delete this.counts[key];
    for (const key of Object.keys(this.sizes)) delete this.sizes[key];
  }

  tryAcquire(key: string, ttlMs: number, token: string): Promise<AcquireResult> {
    this.count('tryAcquire');
    return this.inner.tryAcquire(key, ttlMs, token);
  }
  markComplete(key: string, ttlMs: number, token: string) {
    this.count('markComplete');
    return this.inner.markComplete(key, ttlMs, token);
  }
  forget(key: string, token: string) {
    this.count('forget');
    return this.inner.forget(key, token);
  }
}

describe('@SqsBatchHandler()', () => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const start = async (store: IdempotencyStore = new InMemoryIdempotencyStore()) => {
    app = await createTestApp({ idempotency: { store, service: 'rows' }, imports: [RowsModule] });
    return { app, ledger: app.get(RowsLedger) };
  };

  it('hands a batch of new events to one call, in arrival order, claiming and completing in one store call each', async () => {
    const store = new CountingStore(new InMemoryIdempotencyStore());
    const { app, ledger } = await start(store);
    const ids = Array.from({ length: 10 }, (_, i) => `e${i}`);

    const { statuses, records } = await app.sqs.sendBatch(ids.map((id) => row(id)));

    expect(statuses).toEqual(Array(10).fill('OK'));
    expect(ledger.calls).toHaveLength(1);
    expect(ledger.calls[0].rows).toEqual(ids.map((id) => `row-${id}`));
    expect(ledger.calls[0].messageIds).toEqual(records.map((record) => record.messageId));
    expect(ledger.calls[0].keys).toEqual(ids);
    expect(ledger.calls[0].instances).toBe(true);
    expect(store.counts).toEqual({ tryAcquireMany: 1, markCompleteMany: 1 });
    expect(store.sizes).toEqual({ tryAcquireMany: [10], markCompleteMany: [10] });
  });

  it('passes only new events: completed duplicates are acked unseen, in-batch copies settled with the first', async () => {
    const { app, ledger } = await start();
    await app.sqs.sendBatch([row('a'), row('b')]);

    const { statuses } = await app.sqs.sendBatch([
      row('a'),
      row('c'),
      row('c', 'row-c-copy'),
      row('b'),
      row('d'),
    ]);

    expect(statuses).toEqual(['DUPLICATE', 'OK', 'DUPLICATE', 'DUPLICATE', 'OK']);
    expect(ledger.calls.map((call) => call.rows)).toEqual([
      ['row-a', 'row-b'],
      ['row-c', 'row-d'],
    ]);
  });

  it('settles each event as the handler names it: failed ones released for redelivery, skips acked', async () => {
    const { app, ledger } = await start();
    ledger.script.set('row-b', 'fail').set('row-c', 'skip');

    const first = await app.sqs.sendBatch([row('a'), row('b'), row('c'), row('b', 'row-b-copy')]);

    expect(first.statuses).toEqual(['OK', 'FAILED', 'SKIPPED', 'FAILED']);
    expect(first.response.batchItemFailures.map((failure) => failure.itemIdentifier)).toEqual([
      first.records[1].messageId,
      first.records[3].messageId,
    ]);
    expect(first.results[1].error?.message).toBe('row row-b rejected');

    ledger.script.clear();
    const again = await app.sqs.sendBatch([row('a'), row('b'), row('c')]);
    expect(again.statuses).toEqual(['DUPLICATE', 'OK', 'DUPLICATE']);
    expect(ledger.calls.map((call) => call.rows)).toEqual([['row-a', 'row-b', 'row-c'], ['row-b']]);
  });

  it('fails and releases every event given when the handler throws; never a whole-batch error', async () => {
    const { app, ledger } = await start();
    ledger.script.set('row-b', 'throw');

    const { statuses, response, records } = await app.sqs.sendBatch([
      row('a'),
      row('b'),
      { type: 'row_ignored', id: 'x' },
    ]);

    expect(statuses).toEqual(['FAILED', 'FAILED', 'OK']);
    expect(response.batchItemFailures.map((failure) => failure.itemIdentifier)).toEqual([
      records[0].messageId,
      records[1].messageId,
    ]);
    expect(ledger.ignored).toEqual(['x']);
    ledger.script.clear();
    expect((await app.sqs.sendBatch([row('a'), row('b')])).statuses).toEqual(['OK', 'OK']);
  });

  it('fails in-flight copies for redelivery while the first call holds their keys', async () => {
    const { app, ledger } = await start();
    let release!: () => void;
    ledger.hold = new Promise<void>((resolve) => (release = resolve));
    const holding = app.sqs.sendBatch([row('a'), row('b')]);
    await waitFor(() => ledger.calls.length === 1, 5_000, 'the first call');
    ledger.hold = undefined;

    const during = await app.sqs.sendBatch([row('a'), row('c')]);
    release();
    expect((await holding).statuses).toEqual(['OK', 'OK']);

    expect(during.statuses).toEqual(['IN_PROGRESS', 'OK']);
    expect(during.response.batchItemFailures).toEqual([{ itemIdentifier: during.records[0].messageId }]);
    expect(ledger.calls.map((call) => call.rows)).toEqual([['row-a', 'row-b'], ['row-c']]);
  });

  it('fails every event of a call that names an object it was not given', async () => {
    const { app, ledger } = await start();
    ledger.script.set('row-a', 'return-stranger');
    const { results } = await app.sqs.sendBatch([row('a'), row('b')]);
    expect(results.map((result) => result.status)).toEqual(['FAILED', 'FAILED']);
    expect(results[0].error?.message).toMatch(
      /RowsHandler.onRows returned SqsBatchFailures naming an object/,
    );
  });

  it("counts each event's claim in the Center's claim latency, as single records' claims are", async () => {
    app = await createTestApp({ idempotency: { service: 'rows', stats: {} }, imports: [RowsModule] });
    expect((await app.sqs.sendBatch([row('c1'), row('c2'), row('c3')])).statuses).toEqual(['OK', 'OK', 'OK']);
    expect((await app.get(IdempotencyStats).activity()).claims).toMatchObject({
      claims: 3,
      timed: 3,
      errors: 0,
    });
  });

  it('works with a store without batch methods (a call per key)', async () => {
    const store = new CountingStore(new InMemoryIdempotencyStore(), false);
    const { app, ledger } = await start(store);
    ledger.script.set('row-b', 'fail');
    const { statuses } = await app.sqs.sendBatch([row('a'), row('b'), row('c')]);
    expect(statuses).toEqual(['OK', 'FAILED', 'OK']);
    expect(store.counts).toEqual({ tryAcquire: 3, markComplete: 2, forget: 1 });
    expect(ledger.calls).toHaveLength(1);
  });

  it('fails a key held under another payload fingerprint, as single records do', async () => {
    app = await createTestApp({
      idempotency: { service: 'rows', fingerprint: true },
      imports: [RowsModule],
    });
    const ledger = app.get(RowsLedger);
    await app.sqs.sendBatch([row('a'), row('b')]);

    const { statuses, results } = await app.sqs.sendBatch([row('a', 'row-a-changed'), row('b'), row('c')]);

    expect(statuses).toEqual(['FAILED', 'DUPLICATE', 'OK']);
    expect(results[0].error?.name).toBe('IdempotencyFingerprintMismatchError');
    expect(ledger.calls.map((call) => call.rows)).toEqual([['row-a', 'row-b'], ['row-c']]);
  });

  it('fails a record without its key (no claim, not passed); with requireKey: false passes it unclaimed', async () => {
    const first = await start();
    const keyless = { type: 'row_written', row: 'row-keyless', amount: 1 };
    const strict = await first.app.sqs.sendBatch([keyless, row('a')]);
    expect(strict.statuses).toEqual(['FAILED', 'OK']);
    expect(strict.results[0].error?.name).toBe('MissingIdempotencyKeyError');
    expect(first.ledger.calls.map((call) => call.rows)).toEqual([['row-a']]);
    await first.app.close();

    app = await createTestApp({ idempotency: { requireKey: false }, imports: [RowsModule] });
    const lenient = app.get(RowsLedger);
    const { statuses } = await app.sqs.sendBatch([keyless, keyless, row('a')]);
    expect(statuses).toEqual(['OK', 'OK', 'OK']);
    expect(lenient.calls.map((call) => call.rows)).toEqual([['row-keyless', 'row-keyless', 'row-a']]);
  });

  it('a failed batch claim fails every event (onStoreError: fail), or runs them without dedup (process)', async () => {
    const failing = new CountingStore(new InMemoryIdempotencyStore());
    failing.tryAcquireMany = () => Promise.reject(new Error('store down'));
    const first = await start(failing);
    const { statuses, results } = await first.app.sqs.sendBatch([row('a'), row('b')]);
    expect(statuses).toEqual(['FAILED', 'FAILED']);
    expect(results[0].error?.name).toBe('IdempotencyStoreError');
    expect(first.ledger.calls).toEqual([]);
    await first.app.close();

    const processing = new CountingStore(new InMemoryIdempotencyStore());
    processing.tryAcquireMany = () => Promise.reject(new Error('store down'));
    app = await createTestApp({
      idempotency: { store: processing, service: 'rows', onStoreError: 'process' },
      imports: [RowsModule],
    });
    const { statuses: unclaimed } = await app.sqs.sendBatch([row('a'), row('b')]);
    expect(unclaimed).toEqual(['OK', 'OK']);
    expect(app.get(RowsLedger).calls.map((call) => call.rows)).toEqual([['row-a', 'row-b']]);
    expect(processing.counts).toEqual({}); // nothing to complete: nothing was claimed
  });

  it('logs each record once with its status', async () => {
    const { app } = await start();
    await app.sqs.sendBatch([row('a'), row('a', 'copy')]);
    const lines = app.logs.lines.filter((line) => line.context === 'SqsRecord').map((line) => line.message);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^status=OK type=row_written key=a /);
    expect(lines[1]).toMatch(/^status=DUPLICATE type=row_written key=a /);
  });
});

describe('@SqsBatchHandler() refused at start-up', () => {
  it('beside an @SqsMessageHandler() of the same event type on the same queue, naming the fix', async () => {
    @Injectable()
    class Both {
      @SqsBatchHandler(RowWritten)
      onRows(): void {}

      @SqsMessageHandler(RowWritten)
      onRow(): void {}
    }
    @Module({ providers: [Both] })
    class BothModule {}
    await expect(createTestApp({ imports: [BothModule] })).rejects.toThrow(
      new SqsConfigurationError(
        'Queue "*": event type "row_written" has both Both.onRows (@SqsBatchHandler) and Both.onRow ' +
          '(@SqsMessageHandler); a batch handler must be the only handler of its event type on its queue (each ' +
          'event is claimed and settled once). Make them one kind (both @SqsMessageHandler(), or one ' +
          '@SqsBatchHandler() doing both jobs), or bind one to another queue with { queue }.',
      ),
    );
  });

  it('on a FIFO queue, naming the fix', async () => {
    await expect(
      createTestApp({
        imports: [RowsModule],
        sqs: {
          queues: [
            { name: 'rows.fifo', url: 'https://sqs.eu-west-1.amazonaws.com/1/rows.fifo', consume: false },
          ],
        },
      }),
    ).rejects.toThrow(
      /Queue "rows.fifo" is a FIFO queue, and @SqsBatchHandler\(\) is not supported on FIFO queues/,
    );
  });

  it('transactional on a store without runBatchInTransaction, naming the fix', async () => {
    @Injectable()
    class Transactional {
      @SqsBatchHandler(RowWritten)
      @Idempotent({ transactional: true })
      onRows(): void {}
    }
    @Module({ providers: [Transactional] })
    class TransactionalModule {}
    /** A store that says it runs transactions (none is run: the app must not start). */
    class TransactionsStore extends InMemoryIdempotencyStore {
      runInTransaction(): Promise<never> {
        return Promise.reject(new Error('not called'));
      }
    }
    await expect(
      createTestApp({ idempotency: { store: new TransactionsStore() }, imports: [TransactionalModule] }),
    ).rejects.toThrow(
      /transactional: true \}\) on Transactional.onRows, an @SqsBatchHandler\(\): the store TransactionsStore runs single records in a transaction \(runInTransaction\) but not a batch handler's call \(runBatchInTransaction\)[\s\S]*ON CONFLICT DO NOTHING/,
    );
  });

  it('on a method that is also an @SqsMessageHandler()', () => {
    expect(() => {
      class Twice {
        @SqsBatchHandler(RowWritten)
        @SqsMessageHandler(RowWritten)
        on(): void {}
      }
      return Twice;
    }).toThrow(/also an @SqsMessageHandler\(\); a method takes either one event/);
  });
});
