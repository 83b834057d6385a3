import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { AcquireResult } from '../lib/stores';
import { IdempotencyConfigurationError, IdempotencyModule, IdempotencyStoreUnavailableError } from '../lib';
import {
  createIdempotencyTable,
  idempotencyTableDdl,
  PgQueryable,
  PgQueryConfig,
  POSTGRES_MAX_TTL_MS,
  PostgresIdempotencyStore,
} from '../lib/stores/postgres';
import { describeIdempotencyStore } from '../lib/testing';
import { CapturingLogger } from './support/capturing-logger';
import { createTestDatabase, TestDatabase } from './support/postgres-database';
import { requires } from './support/prerequisites';
import { freePort } from './support/redis-server';
import { waitFor } from './support/sqs-queues';

/**
 * PostgresIdempotencyStore on a real PostgreSQL, in a database of its own: the conformance kit
 * (on a table whose schema and name need quoting), then what is particular to Postgres: the
 * database's clock, the table check at start-up, the helper that creates the table, the pools it
 * owns or not, prepared statements, and the sweeper of expired rows.
 */
const postgres = requires('postgres');

postgres.describe('PostgresIdempotencyStore', () => {
  let db: TestDatabase;
  let pools: Pool[];
  beforeAll(async () => {
    db = await createTestDatabase('store');
    // Four pools: the concurrent claimers of the kit spread over four sets of connections.
    pools = Array.from({ length: 4 }, () => db.pool({ max: 5 }));
  });
  afterAll(() => db?.drop());

  // A schema and a table name that only work if every statement quotes them.
  const odd = { schema: 'Tenant "One"', table: 'inbox $$ keys' };
  describeIdempotencyStore(
    'the conformance kit, on a quoted schema and table',
    async () => {
      await createIdempotencyTable(pools[0], odd);
      const [store, ...peers] = pools.map((pool) => new PostgresIdempotencyStore(pool, odd));
      return {
        store,
        peers,
        dispose: () => Promise.all([store, ...peers].map((each) => each.close())).then(() => undefined),
      };
    },
    // No batch methods (yet): the module claims and completes key by key with this store.
    { batches: false },
  );

  describe('the claim', () => {
    let store: PostgresIdempotencyStore;
    beforeAll(() => createIdempotencyTable(pools[0]));
    beforeEach(() => {
      store = new PostgresIdempotencyStore(pools[0], { sweeper: false });
    });
    afterEach(() => store.close());

    const row = async (key: string) =>
      (
        await pools[0].query(
          `SELECT token, completed, expires_at IS NULL AS forever,
                  extract(epoch FROM expires_at - statement_timestamp()) * 1000 AS remaining_ms
             FROM idempotency_keys WHERE key = $1`,
          [key],
        )
      ).rows[0];

    it('sets expiries by the database clock, not the host’s', async () => {
      const key = `clock:${randomUUID()}`;
      // This host's clock is a year ahead: expiries computed from it would be a year off.
      jest.useFakeTimers({ now: Date.now() + 365 * 86_400_000, doNotFake: timersPgNeeds });
      try {
        expect(await store.tryAcquire(key, 60_000, 'owner')).toBe(AcquireResult.ACQUIRED);
        expect(await store.tryAcquire(key, 60_000, 'other')).toBe(AcquireResult.IN_PROGRESS);
      } finally {
        jest.useRealTimers();
      }
      const { remaining_ms } = await row(key);
      expect(Number(remaining_ms)).toBeGreaterThan(55_000);
      expect(Number(remaining_ms)).toBeLessThanOrEqual(60_000);
    });

    it('keeps a claim’s fingerprint and message id in their columns, through its completion only', async () => {
      const key = `fingerprint:${randomUUID()}`;
      const columns = async () =>
        (await pools[0].query('SELECT fingerprint, message_id FROM idempotency_keys WHERE key = $1', [key]))
          .rows[0];
      await store.tryAcquire(key, 60_000, 'owner', {
        fingerprint: 'Zm9vYmFy',
        messageId: 'm-1',
      });
      expect(await columns()).toEqual({ fingerprint: 'Zm9vYmFy', message_id: 'm-1' });
      await store.markComplete(key, 60_000, 'owner');
      expect(await columns()).toEqual({ fingerprint: 'Zm9vYmFy', message_id: 'm-1' });
      // The row expires; a claim without a fingerprint takes it over and clears them.
      await pools[0].query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 s' WHERE key = $1`, [
        key,
      ]);
      expect(await store.tryAcquire(key, 60_000, 'next')).toBe(AcquireResult.ACQUIRED);
      expect(await columns()).toEqual({ fingerprint: null, message_id: null });
    });

    it('keeps a key completed with ttl Infinity as a row without expiry, holding the completing token', async () => {
      const key = `forever:${randomUUID()}`;
      await store.tryAcquire(key, 1_000, 'owner');
      expect(await store.markComplete(key, Infinity, 'owner')).toBe(true);
      expect(await row(key)).toMatchObject({ token: 'owner', completed: true, forever: true });
    });

    it('gives an expired completed key to exactly one of 60 concurrent claimers, and never answers COMPLETED', async () => {
      // Each loser's snapshot may still show the old completed row: answering from it would ack a
      // copy while the winner runs. They must answer IN_PROGRESS.
      const key = `expired-completed:${randomUUID()}`;
      await pools[0].query(
        `INSERT INTO idempotency_keys VALUES ($1, 'old', true, statement_timestamp() - interval '1 second')`,
        [key],
      );
      const stores = pools.map((pool) => new PostgresIdempotencyStore(pool, { sweeper: false }));
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, i) => stores[i % stores.length].tryAcquire(key, 60_000, `t${i}`)),
      );
      expect(answers.filter((answer) => answer === AcquireResult.ACQUIRED)).toHaveLength(1);
      expect(answers.filter((answer) => answer === AcquireResult.IN_PROGRESS)).toHaveLength(59);
      expect((await row(key)).token).toBe(`t${answers.indexOf(AcquireResult.ACQUIRED)}`);
    });

    it('rounds fractional TTLs up and refuses TTLs it cannot store', async () => {
      const key = `ttl:${randomUUID()}`;
      expect(await store.tryAcquire(key, 0.2, 'owner')).toBe(AcquireResult.ACQUIRED);
      for (const ttl of [0, -1, NaN, 2e15]) {
        await expect(store.tryAcquire(`${key}:${ttl}`, ttl, 'owner')).rejects.toThrow(RangeError);
        await expect(store.markComplete(key, ttl, 'owner')).rejects.toThrow(/up to 1000000000000000/);
      }
    });

    it('keeps a completion for its longest TTL, POSTGRES_MAX_TTL_MS (about 31,700 years)', async () => {
      const key = `max-ttl:${randomUUID()}`;
      expect(store.maxTtlMs).toBe(POSTGRES_MAX_TTL_MS);
      await store.tryAcquire(key, 60_000, 'owner');
      expect(await store.markComplete(key, POSTGRES_MAX_TTL_MS, 'owner')).toBe(true);
      expect(Number((await row(key)).remaining_ms)).toBeGreaterThan(POSTGRES_MAX_TTL_MS - 60_000);
      expect(await store.tryAcquire(key, 60_000, 'next')).toBe(AcquireResult.COMPLETED);
    });

    it('prepares its statements by name on each connection, or not at all when told', async () => {
      const single = db.pool({ max: 1 });
      const prepared = async () =>
        (await single.query('SELECT name FROM pg_prepared_statements ORDER BY name')).rows.map((r) => r.name);
      const plain = new PostgresIdempotencyStore(single, { sweeper: false, preparedStatements: false });
      const key = `prepared:${randomUUID()}`;
      await plain.tryAcquire(key, 60_000, 'a');
      await plain.markComplete(key, 60_000, 'a');
      expect(await prepared()).toEqual([]);

      const named = new PostgresIdempotencyStore(single, { sweeper: false });
      await named.tryAcquire(key, 60_000, 'b');
      await named.tryAcquire(`${key}:2`, 60_000, 'b');
      await named.forget(`${key}:2`, 'b');
      expect(await prepared()).toEqual([
        expect.stringMatching(/^nestjs_idempotent_sqs_claim_[0-9a-f]{16}$/),
        expect.stringMatching(/^nestjs_idempotent_sqs_release_[0-9a-f]{16}$/),
      ]);
      // Each step by its name, as a DBA reads them (pg_prepared_statements, pg_stat_statements), and its
      // text on one line.
      await named.tryAcquire(`${key}:3`, 60_000, 'b');
      await named.extend(`${key}:3`, 60_000, 'b');
      await named.markComplete(`${key}:3`, 60_000, 'b');
      await named.inspect(`${key}:3`);
      await named.sweepExpiredRows();
      const steps = (
        await single.query('SELECT name, statement FROM pg_prepared_statements ORDER BY name')
      ).rows.map((row: { name: string; statement: string }) => {
        expect(row.statement).not.toMatch(/\s\s|\n/);
        return row.name.replace(/_[0-9a-f]{16}$/, '');
      });
      expect(steps).toEqual(
        ['claim', 'complete', 'extend', 'inspect', 'release', 'sweep'].map(
          (step) => `nestjs_idempotent_sqs_${step}`,
        ),
      );
    });
  });

  describe('the table', () => {
    it('is created by createIdempotencyTable, by several instances at once, and again without harm', async () => {
      const options = { schema: `s_${randomUUID().slice(0, 8)}`, table: 'keys' };
      await Promise.all(pools.map((pool) => createIdempotencyTable(pool, options)));
      await createIdempotencyTable(pools[0], options);
      const store = new PostgresIdempotencyStore(pools[0], { ...options, sweeper: false });
      await expect(store.verifyTable()).resolves.toBeUndefined();
      const { rows } = await pools[0].query(
        `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'keys' ORDER BY 1`,
        [options.schema],
      );
      expect(rows.map((r) => r.indexname)).toEqual(['keys_expires_at_idx', 'keys_pkey']);
    });

    it('is checked when the app starts: a missing table stops it with the way to create it', async () => {
      const table = `missing_${randomUUID().slice(0, 8)}`;
      const start = Test.createTestingModule({
        imports: [
          IdempotencyModule.forRoot({
            store: new PostgresIdempotencyStore(pools[0], { table }),
            service: 'orders',
          }),
        ],
      })
        .compile()
        .then((moduleRef) => moduleRef.init());
      const error = await start.then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(IdempotencyConfigurationError);
      expect((error as Error).message).toContain(`the table ${table} does not exist`);
      expect((error as Error).message).toContain(
        `await createIdempotencyTable(pool, { table: "${table}" }) from 'nestjs-idempotent-sqs/postgres'`,
      );
      expect((error as Error).message).toContain(idempotencyTableDdl({ table }));
    });

    it('refuses a read-only connection (a standby) at start-up', async () => {
      const readOnly = db.pool({ max: 1, options: '-c default_transaction_read_only=on' });
      const store = new PostgresIdempotencyStore(readOnly, { sweeper: false });
      await expect(store.onModuleInit()).rejects.toThrow(
        /read-only connection .*point the store at the primary/,
      );
    });

    it('warns once about what a database crash could lose (an UNLOGGED table, asynchronous commit)', async () => {
      const table = `unlogged_${randomUUID().slice(0, 8)}`;
      await createIdempotencyTable(pools[0], { table });
      await pools[0].query(`ALTER TABLE ${table} SET UNLOGGED`);
      const asyncCommit = db.pool({ max: 1, options: '-c synchronous_commit=off' });
      const logs = new CapturingLogger();
      Logger.overrideLogger(logs);
      try {
        const store = new PostgresIdempotencyStore(asyncCommit, { table, sweeper: false });
        await store.onModuleInit();
        await store.verifyTable();
        expect(store.warnings.map((warning) => warning.code)).toEqual([
          'postgres.unlogged-table',
          'postgres.synchronous-commit',
        ]);
        expect(logs.matching('warn', /is UNLOGGED: a crash of the database empties it/)).toHaveLength(1);
        expect(logs.matching('warn', /commit asynchronously/)).toHaveLength(1);
        const logged = new PostgresIdempotencyStore(pools[0], { sweeper: false });
        await logged.verifyTable();
        expect(logged.warnings).toEqual([]);
      } finally {
        Logger.overrideLogger(true);
      }
    });

    it.each([
      [
        'a wrong type',
        'key text PRIMARY KEY, token text, completed boolean, expires_at timestamp',
        /"expires_at" of type timestamp without time zone/,
      ],
      [
        'a missing column',
        'key text PRIMARY KEY, token text, expires_at timestamptz',
        /has no column "completed" \(boolean\)/,
      ],
      [
        'no fingerprint columns',
        'key text PRIMARY KEY, token text, completed boolean, expires_at timestamptz',
        /has no column "fingerprint" \(text\); has no column "message_id" \(text\)\. The store needs this shape/,
      ],
      [
        'no unique key',
        'key text, token text, completed boolean, expires_at timestamptz',
        /no primary key or unique index on "key"/,
      ],
    ])('is checked when the app starts: %s stops it, naming the problem', async (_, columns, problem) => {
      const table = `bad_${randomUUID().slice(0, 8)}`;
      await pools[0].query(`CREATE TABLE ${table} (${columns})`);
      const store = new PostgresIdempotencyStore(pools[0], { table });
      await expect(store.onModuleInit()).rejects.toThrow(problem);
    });
  });

  describe('the pool', () => {
    it('creates its own pool from a connection string, and ends it when the app shuts down', async () => {
      const store = new PostgresIdempotencyStore(db.url, { sweeper: false });
      const moduleRef = await Test.createTestingModule({
        imports: [IdempotencyModule.forRoot({ store, service: 'orders' })],
      }).compile();
      await moduleRef.init();
      expect(await store.tryAcquire(`owned:${randomUUID()}`, 60_000, 'a')).toBe(AcquireResult.ACQUIRED);
      const pool = store.pool as Pool;
      expect(pool.totalCount).toBeGreaterThan(0);
      await moduleRef.close();
      expect(pool.ended).toBe(true);
      // Used again, by the next app made from a module that built it once: it says so (it answered
      // "Cannot use a pool after calling end on the pool"), and how to build one per app.
      const closed = expect.objectContaining({
        code: 'IDEMPOTENCY_STORE_CLOSED',
        message: expect.stringContaining(
          `PostgresIdempotencyStore (${db.url.replace(/\/\/([^:@/]*)(:[^@/]*)?@/, '//$1@')}) is closed: ` +
            'the application that started it shut down',
        ),
      });
      await expect(store.tryAcquire('after', 60_000, 'a')).rejects.toEqual(closed);
      const next = await Test.createTestingModule({
        imports: [IdempotencyModule.forRoot({ store, service: 'orders' })],
      }).compile();
      await expect(next.init()).rejects.toEqual(closed);
      expect(store.pool).toBeUndefined();
    });

    it.each([undefined, null, ''])(
      'given nothing to connect to (%p: an unset DATABASE_URL), is built but refuses to start',
      async (connection) => {
        // No throw when built: a store the tests replace with overrideProvider is never started.
        const store = new PostgresIdempotencyStore(connection as unknown as string);
        const refusal =
          /^PostgresIdempotencyStore: nothing to connect to: it was given (undefined|null|an empty string) \(an unset environment variable, such as DATABASE_URL\?\)\. Give a postgres:\/\/ connection string/;
        await expect(store.onModuleInit()).rejects.toThrow(refusal);
        await expect(store.onModuleInit()).rejects.toBeInstanceOf(IdempotencyConfigurationError);
        await expect(store.tryAcquire('k', 60_000, 't')).rejects.toThrow(refusal);
        expect(store.pool).toBeUndefined();
        await store.close();
      },
    );

    it('leaves a pool it was given open when the app shuts down', async () => {
      const pool = db.pool({ max: 1 });
      const store = new PostgresIdempotencyStore(pool, { sweeper: false });
      const moduleRef = await Test.createTestingModule({
        imports: [IdempotencyModule.forRoot({ store, service: 'orders' })],
      }).compile();
      await moduleRef.init();
      await moduleRef.close();
      expect(pool.ended).toBe(false);
      expect(await store.tryAcquire(`yours:${randomUUID()}`, 60_000, 'a')).toBe(AcquireResult.ACQUIRED);
    });

    it('with failFastOnStartup, stops the start when the database does not answer, naming it without the password', async () => {
      const url = `postgres://app:s3cret@127.0.0.1:${await freePort()}/orders`;
      const store = new PostgresIdempotencyStore(url, { failFastOnStartup: true, startupTimeoutMs: 2_000 });
      const error = await store.onModuleInit().then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(IdempotencyStoreUnavailableError);
      expect((error as Error).message).toContain('could not reach postgres://app@127.0.0.1:');
      expect((error as Error).message).not.toContain('s3cret');
    });

    it('without it, starts anyway and says so; its claims fail until the database answers', async () => {
      const url = `postgres://postgres@127.0.0.1:${await freePort()}/orders`;
      const logs = new CapturingLogger();
      Logger.overrideLogger(logs);
      const store = new PostgresIdempotencyStore(url, { startupTimeoutMs: 2_000 });
      try {
        await expect(store.onModuleInit()).resolves.toBeUndefined();
        expect(
          logs.matching('warn', /Could not check the table idempotency_keys at start-up .*fail closed/),
        ).toHaveLength(1);
        await expect(store.tryAcquire('k', 60_000, 't')).rejects.toThrow(/ECONNREFUSED/);
      } finally {
        Logger.overrideLogger(true);
        await store.close();
      }
    });
    it('says once that the database is unreachable, whichever statement meets the outage first', async () => {
      for (const call of [
        (store: PostgresIdempotencyStore) => store.forget('k', 't'),
        (store: PostgresIdempotencyStore) => store.extend('k', 60_000, 't'),
        (store: PostgresIdempotencyStore) => store.inspect('k'),
      ]) {
        const url = `postgres://postgres@127.0.0.1:${await freePort()}/orders`;
        const logs = new CapturingLogger();
        Logger.overrideLogger(logs);
        const store = new PostgresIdempotencyStore(url, { sweeper: false });
        try {
          await expect(call(store)).rejects.toThrow(/ECONNREFUSED/);
          await expect(call(store)).rejects.toThrow(/ECONNREFUSED/);
          expect(logs.matching('warn', /a database connection failed \(.*ECONNREFUSED/)).toHaveLength(1);
        } finally {
          Logger.overrideLogger(true);
          await store.close();
        }
      }
    });
  });

  describe('the sweeper', () => {
    const table = 'sweep_keys';
    beforeAll(() => createIdempotencyTable(pools[0], { table }));
    beforeEach(() => pools[0].query(`TRUNCATE ${table}`));
    const count = async (where = 'true') =>
      Number((await pools[0].query(`SELECT count(*) AS n FROM ${table} WHERE ${where}`)).rows[0].n);
    const insertRows = (rows: number, expiry: string, completed = true) =>
      pools[0].query(
        `INSERT INTO ${table} SELECT 'k' || gen_random_uuid(), 't', $1, ${expiry} FROM generate_series(1, $2)`,
        [completed, rows],
      );
    const EXPIRED = "statement_timestamp() - interval '1 second'";

    it('deletes expired rows in batches, keeps live ones, and skips rows another transaction holds', async () => {
      await insertRows(2_300, EXPIRED);
      await insertRows(300, EXPIRED, false); // crashed workers' leases
      await insertRows(50, "statement_timestamp() + interval '1 hour'");
      await insertRows(20, 'NULL');
      // A transaction holds three expired rows (as a claim taking them over would).
      const holder = await pools[1].connect();
      await holder.query('BEGIN');
      await holder.query(
        `SELECT key FROM ${table} WHERE expires_at < statement_timestamp() LIMIT 3 FOR UPDATE`,
      );
      const statements: string[] = [];
      const store = new PostgresIdempotencyStore(countingPool(pools[0], statements), {
        table,
        sweeper: { batchSize: 1_000 },
      });
      try {
        // Resolves while the holder's transaction is still open: the held rows are skipped, not waited for.
        expect(await store.sweepExpiredRows()).toBe(2_597);
        expect(statements.filter((text) => text.startsWith('DELETE'))).toHaveLength(3);
        expect(await count()).toBe(73);
      } finally {
        await holder.query('COMMIT');
        holder.release();
      }
      expect(await store.sweepExpiredRows()).toBe(3);
      expect(await count('expires_at IS NULL')).toBe(20);
      expect(await count('expires_at > statement_timestamp()')).toBe(50);
      await store.close();
    });

    it('runs in the background on an unref’d timer from the first claim, and stops when the store closes', async () => {
      const statements: string[] = [];
      const timersBefore = activeTimers();
      const store = new PostgresIdempotencyStore(countingPool(pools[0], statements), {
        table,
        sweeper: { intervalMs: 40, batchSize: 100 },
      });
      await store.tryAcquire(`bg:${randomUUID()}`, 1, 'short-lease');
      expect(activeTimers()).toBe(timersBefore); // started, but keeps nothing alive
      await insertRows(250, EXPIRED);
      await waitFor(async () => (await count()) === 0, 'the background sweeper to delete every expired row');
      await store.close();
      const sweepsAtClose = statements.filter((text) => text.startsWith('DELETE')).length;
      await insertRows(10, EXPIRED);
      await new Promise((resolve) => setTimeout(resolve, 200)); // five intervals: no sweep may run
      expect(statements.filter((text) => text.startsWith('DELETE')).length).toBe(sweepsAtClose);
      expect(await count()).toBe(10);
    });

    it('runs no background sweep with sweeper: false; sweepExpiredRows() still deletes on demand', async () => {
      const statements: string[] = [];
      const store = new PostgresIdempotencyStore(countingPool(pools[0], statements), {
        table,
        sweeper: false,
      });
      await store.onModuleInit();
      await insertRows(5, EXPIRED);
      await store.tryAcquire(`off:${randomUUID()}`, 60_000, 'a');
      expect(statements.some((text) => text.startsWith('DELETE'))).toBe(false);
      expect(await store.sweepExpiredRows()).toBe(5);
      await store.close();
    });
  });
});

/** What pg needs to keep working while a test fakes the date (only `Date` is faked). */
const timersPgNeeds: Array<
  | 'setTimeout'
  | 'clearTimeout'
  | 'setInterval'
  | 'clearInterval'
  | 'setImmediate'
  | 'clearImmediate'
  | 'nextTick'
  | 'queueMicrotask'
  | 'hrtime'
  | 'performance'
> = [
  'setTimeout',
  'clearTimeout',
  'setInterval',
  'clearInterval',
  'setImmediate',
  'clearImmediate',
  'nextTick',
  'queueMicrotask',
  'hrtime',
  'performance',
];

/** Timers keeping the process alive (an unref'd timer is not one of them). */
function activeTimers(): number {
  return process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;
}

/** A pool that records the text of every statement sent through it. */
function countingPool(pool: Pool, texts: string[]): PgQueryable {
  return {
    query: (config: PgQueryConfig) => {
      texts.push(config.text.trimStart());
      return pool.query(config as never) as never;
    },
  };
}
