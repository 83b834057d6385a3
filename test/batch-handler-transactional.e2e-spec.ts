import { Injectable, Module } from '@nestjs/common';
import { IsString } from 'class-validator';
import type { Pool, PoolClient } from 'pg';
import {
  Idempotent,
  SkipMessageException,
  SqsBatchContext,
  SqsBatchFailures,
  SqsBatchHandler,
  SqsEvent,
} from '../lib';
import { createIdempotencyTable, PostgresIdempotencyStore } from '../lib/stores/postgres';
import { createTestDatabase, TestDatabase } from './support/postgres-database';
import { requires } from './support/prerequisites';
import { createTestApp, TestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

/**
 * A transactional batch handler on Postgres (`@SqsBatchHandler()` + `@Idempotent({ transactional: true })`):
 * the batch's claims, the handler's bulk write (in `batch.transaction`) and the completions of the events
 * that succeeded commit in one transaction. A throw rolls back the rows and every claim, so the
 * redelivery writes each row once; failed events named by the handler are not completed; a key held by
 * another open transaction answers IN_PROGRESS at once.
 */

const postgres = requires('postgres');

@SqsEvent('ledger_entry')
class LedgerEntry {
  @IsString() id!: string;
  @IsString() account!: string;
}

/** What a test makes the handler do: throw after the write, fail some accounts, hold the transaction open. */
const script = {
  throwAfterWrite: false,
  fail: new Set<string>(),
  skip: false,
  hold: undefined as Promise<void> | undefined,
};
const calls: string[][] = [];

@Injectable()
class LedgerHandler {
  @SqsBatchHandler(LedgerEntry)
  @Idempotent({ transactional: true })
  async onEntries(events: LedgerEntry[], batch: SqsBatchContext): Promise<SqsBatchFailures> {
    calls.push(events.map((event) => event.id));
    const hold = script.hold; // read on entry: the test clears it once this call has begun
    const tx = batch.transaction as PoolClient;
    const ok = events.filter((event) => !script.fail.has(event.account));
    await tx.query('INSERT INTO ledger (event_id, account) SELECT * FROM unnest($1::text[], $2::text[])', [
      ok.map((event) => event.id),
      ok.map((event) => event.account),
    ]);
    if (hold) await hold;
    if (script.throwAfterWrite) throw new Error('the bank is down');
    if (script.skip) throw new SkipMessageException('nothing to book');
    return new SqsBatchFailures(
      events.filter((event) => script.fail.has(event.account)).map((event) => [event, new Error('refused')]),
    );
  }
}

@Module({ providers: [LedgerHandler] })
class LedgerModule {}

const entry = (id: string, account = `acct-${id}`) => ({ type: 'ledger_entry', id, account });

postgres.describe('transactional batch handlers on Postgres', () => {
  let db: TestDatabase;
  let pool: Pool;
  let app: TestApp | undefined;

  beforeAll(async () => {
    db = await createTestDatabase('batch_tx');
    pool = db.pool({ max: 6 });
    await createIdempotencyTable(pool);
    await pool.query('CREATE TABLE ledger (event_id text PRIMARY KEY, account text NOT NULL)');
  });
  afterAll(() => db?.drop());
  beforeEach(async () => {
    await pool.query('TRUNCATE ledger, idempotency_keys');
    script.throwAfterWrite = false;
    script.skip = false;
    script.fail.clear();
    script.hold = undefined;
    calls.length = 0;
    app = await createTestApp({
      idempotency: { store: new PostgresIdempotencyStore(pool, { sweeper: false }), service: 'ledger' },
      imports: [LedgerModule],
    });
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const rows = async () =>
    (await pool.query<{ event_id: string }>('SELECT event_id FROM ledger ORDER BY event_id')).rows.map(
      (row) => row.event_id,
    );
  const completed = async () =>
    (
      await pool.query<{ key: string }>(
        'SELECT key FROM idempotency_keys WHERE completed AND (expires_at IS NULL OR expires_at > now()) ORDER BY key',
      )
    ).rows.map((row) => row.key.slice(row.key.lastIndexOf(':') + 1));

  it('commits the rows and the completions together; a redelivery is a duplicate', async () => {
    const { statuses } = await app!.sqs.sendBatch([entry('a'), entry('b'), entry('b'), entry('c')]);
    expect(statuses).toEqual(['OK', 'OK', 'DUPLICATE', 'OK']);
    expect(await rows()).toEqual(['a', 'b', 'c']);
    expect(await completed()).toEqual(['a', 'b', 'c']);

    expect((await app!.sqs.sendBatch([entry('a'), entry('d')])).statuses).toEqual(['DUPLICATE', 'OK']);
    expect(calls).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('rolls back the rows and every claim when the handler throws after writing: the redelivery writes each row once', async () => {
    script.throwAfterWrite = true;
    const first = await app!.sqs.sendBatch([entry('a'), entry('b')]);
    expect(first.statuses).toEqual(['FAILED', 'FAILED']);
    expect(first.results[0].error?.message).toBe('the bank is down');
    expect(await rows()).toEqual([]);
    expect(await completed()).toEqual([]);

    script.throwAfterWrite = false;
    expect((await app!.sqs.sendBatch([entry('a'), entry('b')])).statuses).toEqual(['OK', 'OK']);
    expect(await rows()).toEqual(['a', 'b']);
  });

  it('leaves the events the handler names as failed uncompleted, committing the rest', async () => {
    script.fail.add('acct-b');
    const { statuses } = await app!.sqs.sendBatch([entry('a'), entry('b'), entry('c')]);
    expect(statuses).toEqual(['OK', 'FAILED', 'OK']);
    expect(await rows()).toEqual(['a', 'c']);
    expect(await completed()).toEqual(['a', 'c']);

    script.fail.clear();
    expect((await app!.sqs.sendBatch([entry('a'), entry('b')])).statuses).toEqual(['DUPLICATE', 'OK']);
    expect(await rows()).toEqual(['a', 'b', 'c']);
  });

  it('a skip commits the completions without the rows', async () => {
    script.skip = true;
    expect((await app!.sqs.sendBatch([entry('a'), entry('b')])).statuses).toEqual(['SKIPPED', 'SKIPPED']);
    expect(await rows()).toEqual([]);
    expect(await completed()).toEqual(['a', 'b']);
  });

  it('answers IN_PROGRESS at once for a key another open transaction holds', async () => {
    let release!: () => void;
    script.hold = new Promise<void>((resolve) => (release = resolve));
    const first = app!.sqs.sendBatch([entry('a'), entry('b')]);
    await waitFor(() => calls.length === 1, 10_000, 'the first call');
    script.hold = undefined;

    const second = await app!.sqs.sendBatch([entry('a'), entry('c')]);
    release();
    expect(second.statuses).toEqual(['IN_PROGRESS', 'OK']);
    expect((await first).statuses).toEqual(['OK', 'OK']);
    expect(await rows()).toEqual(['a', 'b', 'c']);
  });
});
