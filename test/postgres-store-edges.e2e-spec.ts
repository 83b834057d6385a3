import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import { createServer, Server, Socket } from 'node:net';
import type { Pool } from 'pg';
import { IdempotencyConfigurationError, IdempotencyModule } from '../lib';
import { AcquireResult } from '../lib/stores';
import {
  createIdempotencyTable,
  PgQueryConfig,
  pgTransactions,
  PostgresIdempotencyStore,
  PostgresTransactions,
} from '../lib/stores/postgres';
import { CapturingLogger } from './support/capturing-logger';
import { createTestDatabase, TestDatabase } from './support/postgres-database';
import { requires } from './support/prerequisites';
import { freePort } from './support/redis-server';
import { waitFor } from './support/sqs-queues';

/**
 * PostgresIdempotencyStore at its edges: what it refuses and how it names itself and its database,
 * the pool it builds from options, a transactions adapter of yours, the first statement being a
 * transaction, when the sweeper starts, a table name that needs quoting inside a literal, and which
 * failures it reports as an outage.
 */
const postgres = requires('postgres');

postgres.describe('PostgresIdempotencyStore at its edges', () => {
  let db: TestDatabase;
  let pool: Pool;
  beforeAll(async () => {
    db = await createTestDatabase('store_edges');
    pool = db.pool({ max: 4 });
    await createIdempotencyTable(pool);
  });
  afterAll(() => db?.drop());

  let logs: CapturingLogger;
  beforeEach(() => {
    logs = new CapturingLogger();
    Logger.overrideLogger(logs);
  });
  afterEach(() => Logger.overrideLogger(true));

  const claimOf = (key: string, idleTimeoutMs = 60_000) => ({
    key: `edge:${key}:${randomUUID()}`,
    ttlMs: 60_000,
    token: key,
    idleTimeoutMs,
  });

  /** A connection's settings from the test database's URL, as pool options. */
  const settingsOf = (url: string) => {
    const parsed = new URL(url);
    return {
      host: parsed.hostname,
      port: Number(parsed.port || 5432),
      user: decodeURIComponent(parsed.username),
      password: decodeURIComponent(parsed.password) || undefined,
      database: parsed.pathname.slice(1),
    };
  };

  describe('what it is given', () => {
    it.each([
      [42, 'number'],
      [() => undefined, 'function'],
      [true, 'boolean'],
    ])('refuses %p, naming what it takes instead', (connection, got) => {
      const build = () => new PostgresIdempotencyStore(connection as never);
      expect(build).toThrow(IdempotencyConfigurationError);
      expect(build).toThrow(
        `PostgresIdempotencyStore: pass a pg Pool, a postgres:// connection string or pg pool options, got ${got}.`,
      );
    });

    it('names itself in each refusal of an option, a TTL or a fingerprint', async () => {
      expect(() => new PostgresIdempotencyStore(pool, { sweper: false } as never)).toThrow(
        /^PostgresIdempotencyStore options: unknown option "sweper"; did you mean "sweeper"\?/,
      );
      expect(() => new PostgresIdempotencyStore(pool, { startupTimeoutMs: 0 })).toThrow(
        'PostgresIdempotencyStore: startupTimeoutMs must be a positive number of milliseconds, got 0.',
      );
      const store = new PostgresIdempotencyStore(pool, { sweeper: false });
      await expect(store.tryAcquire('k', -1, 't')).rejects.toThrow(
        /^PostgresIdempotencyStore: a TTL must be a positive number of milliseconds up to \d+ \(or Infinity for no expiry\), got -1\.$/,
      );
      await expect(store.tryAcquire('k', 60_000, 't', { fingerprint: 'two words' })).rejects.toThrow(
        'PostgresIdempotencyStore: a fingerprint must be a non-empty string without spaces, got "two words".',
      );
    });

    it('is shared between processes: an app without a service identity is refused, naming the store', async () => {
      const saved = { ...process.env };
      delete process.env.OTEL_SERVICE_NAME;
      delete process.env.AWS_LAMBDA_FUNCTION_NAME;
      try {
        const store = new PostgresIdempotencyStore(pool, { sweeper: false });
        const start = Test.createTestingModule({ imports: [IdempotencyModule.forRoot({ store })] })
          .compile()
          .then((moduleRef) => moduleRef.init());
        await expect(start).rejects.toThrow(
          /the store PostgresIdempotencyStore is shared with other processes, and this app has no service identity/,
        );
      } finally {
        process.env = saved;
      }
    });

    it('builds its own pool from pg pool options, with its time limits under yours', async () => {
      const settings = settingsOf(db.url);
      const store = new PostgresIdempotencyStore(settings, { sweeper: false });
      const key = `options:${randomUUID()}`;
      try {
        expect(await store.tryAcquire(key, 60_000, 'a')).toBe(AcquireResult.ACQUIRED);
        // The row is in this database: the options were used, not pg's defaults.
        expect((await pool.query('SELECT token FROM idempotency_keys WHERE key = $1', [key])).rows).toEqual([
          { token: 'a' },
        ]);
        const timeout = await store.pool!.query<{ statement_timeout: string }>({
          text: 'SHOW statement_timeout',
        });
        expect(timeout.rows[0].statement_timeout).toBe('5s');
      } finally {
        await store.close();
      }
      const yours = new PostgresIdempotencyStore(
        { ...settings, statement_timeout: 1_500 },
        { sweeper: false },
      );
      try {
        await yours.tryAcquire(`options:${randomUUID()}`, 60_000, 'b');
        const timeout = await yours.pool!.query<{ statement_timeout: string }>({
          text: 'SHOW statement_timeout',
        });
        expect(timeout.rows[0].statement_timeout).toBe('1500ms');
      } finally {
        await yours.close();
      }
    });
  });

  describe('how it names its database', () => {
    const PG_VARIABLES = ['PGHOST', 'PGPORT', 'PGDATABASE'] as const;
    let saved: Partial<Record<(typeof PG_VARIABLES)[number], string>>;
    beforeEach(() => {
      saved = {};
      for (const name of PG_VARIABLES) {
        saved[name] = process.env[name];
        delete process.env[name];
      }
    });
    afterEach(() => {
      for (const name of PG_VARIABLES) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    });

    const refusalOf = async (connection: object) => {
      const store = new PostgresIdempotencyStore(connection, {
        failFastOnStartup: true,
        startupTimeoutMs: 3_000,
      });
      const error = await store.onModuleInit().then(
        () => undefined,
        (thrown: Error) => thrown,
      );
      return error?.message;
    };

    it('by the host, port and database of its options', async () => {
      const port = await freePort();
      const message = await refusalOf({ host: '127.0.0.1', port, database: 'orders' });
      expect(message).toMatch(
        new RegExp(`^PostgresIdempotencyStore could not reach PostgreSQL at 127\\.0\\.0\\.1:${port}/orders`),
      );
    });

    it('by pg’s environment variables where the options name none, and pg’s defaults after them', async () => {
      const port = await freePort();
      process.env.PGHOST = '127.0.0.1';
      process.env.PGPORT = String(port);
      process.env.PGDATABASE = 'from_env';
      expect(await refusalOf({})).toContain(`PostgreSQL at 127.0.0.1:${port}/from_env`);
      delete process.env.PGHOST;
      delete process.env.PGDATABASE;
      expect(await refusalOf({ port })).toContain(`PostgreSQL at localhost:${port}/(default database)`);
    });
  });

  describe('what it reports as an outage', () => {
    let silent: Server;
    let sockets: Socket[];
    beforeAll(async () => {
      // Accepts connections and never answers: pg's connect times out, with an error that has no code.
      sockets = [];
      silent = createServer((socket) => sockets.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });

    it('a connect that times out: one warning naming the table and the database, without a code it lacks', async () => {
      const port = (silent.address() as { port: number }).port;
      const store = new PostgresIdempotencyStore(
        { host: '127.0.0.1', port, database: 'orders', connectionTimeoutMillis: 200 },
        { sweeper: false },
      );
      try {
        await expect(store.tryAcquire('k', 60_000, 't')).rejects.toThrow(
          'Connection terminated due to connection timeout',
        );
        expect(logs.lines.filter((line) => line.context === 'PostgresIdempotencyStore')).toEqual([
          expect.objectContaining({
            level: 'warn',
            message:
              `PostgreSQL of the table idempotency_keys (PostgreSQL at 127.0.0.1:${port}/orders): a database ` +
              'connection failed (Connection terminated due to connection timeout): idempotency claims fail until it ' +
              "answers (records fail closed, or run without dedup with onStoreError: 'process'); the pool " +
              'reconnects on the next statement.',
          }),
        ]);
      } finally {
        await store.close();
      }
    });

    it('a statement the database refuses is no outage: no warning', async () => {
      const store = new PostgresIdempotencyStore(pool, { table: 'no_such_table', sweeper: false });
      await expect(store.tryAcquire('k', 60_000, 't')).rejects.toThrow(
        /relation "no_such_table" does not exist/,
      );
      expect(logs.lines.filter((line) => line.context === 'PostgresIdempotencyStore')).toEqual([]);
    });
  });

  describe('transactions', () => {
    it('runs through a transactions adapter of yours', async () => {
      const opened: string[] = [];
      const inner = pgTransactions(pool);
      const yours: PostgresTransactions = {
        query: (config: PgQueryConfig) => inner.query(config),
        transaction: (work) => {
          opened.push('transaction');
          return inner.transaction(work);
        },
      };
      const store = new PostgresIdempotencyStore(yours, { sweeper: false });
      const claim = claimOf('adapter');
      expect(await store.runInTransaction!(claim, async () => 'ran')).toEqual({
        answer: AcquireResult.ACQUIRED,
        result: 'ran',
      });
      expect(opened).toEqual(['transaction']);
      expect(await store.tryAcquire(claim.key, 60_000, 'other')).toBe(AcquireResult.COMPLETED);
    });

    it.each(['runInTransaction', 'runBatchInTransaction'] as const)(
      'connects its own pool when %s is its first statement',
      async (method) => {
        const store = new PostgresIdempotencyStore(db.url, { sweeper: false });
        const claim = claimOf(`first-${method}`);
        try {
          const ran =
            method === 'runInTransaction'
              ? await store.runInTransaction!(claim, async () => 'ran')
              : await store.runBatchInTransaction!([claim], async () => ({ result: 'ran', release: [] }));
          expect(ran).toEqual(
            method === 'runInTransaction' ? { answer: AcquireResult.ACQUIRED, result: 'ran' } : 'ran',
          );
          expect(await store.tryAcquire(claim.key, 60_000, 'other')).toBe(AcquireResult.COMPLETED);
        } finally {
          await store.close();
        }
      },
    );

    it('prepares its transactional statements by name, on the transaction’s connection', async () => {
      const single = db.pool({ max: 1 });
      const store = new PostgresIdempotencyStore(single, { sweeper: false });
      const failed = claimOf('failed');
      await store.runBatchInTransaction!([claimOf('done'), failed], async () => ({
        result: undefined,
        release: [1],
      }));
      // The failed event's completion was taken back before the commit: it runs again.
      expect(await store.tryAcquire(failed.key, 60_000, 'again')).toBe(AcquireResult.ACQUIRED);
      const names = (await single.query('SELECT name FROM pg_prepared_statements ORDER BY name')).rows.map(
        (row: { name: string }) => row.name.replace(/_[0-9a-f]{16}$/, ''),
      );
      expect(names).toEqual(
        ['claim', 'claim_transaction', 'release_transaction'].map((step) => `nestjs_idempotent_sqs_${step}`),
      );
    });

    it('claims on a table whose name holds a quote (the lock’s key is a string literal)', async () => {
      const table = `o'brien keys`;
      await createIdempotencyTable(pool, { table });
      const store = new PostgresIdempotencyStore(pool, { table, sweeper: false });
      const claim = claimOf('quoted');
      expect(await store.runInTransaction!(claim, async () => 'ran')).toEqual({
        answer: AcquireResult.ACQUIRED,
        result: 'ran',
      });
      expect(await store.runInTransaction!(claim, async () => 'again')).toEqual({
        answer: AcquireResult.COMPLETED,
      });
    });

    it('keeps the claims of tables whose names differ by a quote apart (each has its own lock key)', async () => {
      await createIdempotencyTable(pool, { table: `it's keys` });
      await createIdempotencyTable(pool, { table: 'its keys' });
      const quoted = new PostgresIdempotencyStore(pool, { table: `it's keys`, sweeper: false });
      const plain = new PostgresIdempotencyStore(pool, { table: 'its keys', sweeper: false });
      const claim = claimOf('apart');
      let inside!: () => void;
      const entered = new Promise<void>((resolve) => (inside = resolve));
      let leave!: () => void;
      const held = new Promise<void>((resolve) => (leave = resolve));
      const first = quoted.runInTransaction!(claim, async () => {
        inside();
        await held;
        return 'first';
      });
      await entered;
      // The same key on the other table, while the first transaction holds its lock: not held by it.
      expect(await plain.runInTransaction!(claim, async () => 'second')).toEqual({
        answer: AcquireResult.ACQUIRED,
        result: 'second',
      });
      leave();
      expect(await first).toEqual({ answer: AcquireResult.ACQUIRED, result: 'first' });
    });

    describe('and the sweeper', () => {
      const table = 'edge_sweep_keys';
      beforeAll(() => createIdempotencyTable(pool, { table }));
      beforeEach(() => pool.query(`TRUNCATE ${table}`));

      /** The adapter of `pgTransactions(pool)`, recording each statement the store sends outside a transaction. */
      const counted = (statements: string[]): PostgresTransactions => {
        const inner = pgTransactions(pool);
        return {
          query: (config: PgQueryConfig) => {
            statements.push(config.text.trimStart());
            return inner.query(config);
          },
          transaction: (work) => inner.transaction(work),
        };
      };
      const sweeps = (statements: string[]) => statements.filter((text) => text.startsWith('DELETE')).length;

      it.each([
        [
          'a transactional claim',
          (store: PostgresIdempotencyStore) =>
            store.runInTransaction!(claimOf('sweep-one'), async () => undefined),
        ],
        [
          'a batch’s claims',
          (store: PostgresIdempotencyStore) =>
            store.runBatchInTransaction!([claimOf('sweep-batch')], async () => ({
              result: undefined,
              release: [],
            })),
        ],
      ])('starts with %s', async (_what, claim) => {
        const statements: string[] = [];
        const store = new PostgresIdempotencyStore(counted(statements), {
          table,
          sweeper: { intervalMs: 40, batchSize: 100 },
        });
        try {
          await claim(store);
          await waitFor(() => sweeps(statements) > 0, 'a background sweep');
        } finally {
          await store.close();
        }
      });

      it.each([
        [
          'a transaction without a claim',
          (store: PostgresIdempotencyStore) => store.runInTransaction!(undefined, async () => undefined),
        ],
        [
          'a batch of no claims',
          (store: PostgresIdempotencyStore) =>
            store.runBatchInTransaction!([], async () => ({ result: undefined, release: [] })),
        ],
      ])('does not start with %s', async (_what, run) => {
        const statements: string[] = [];
        const store = new PostgresIdempotencyStore(counted(statements), {
          table,
          sweeper: { intervalMs: 20, batchSize: 100 },
        });
        try {
          await run(store);
          await new Promise((resolve) => setTimeout(resolve, 200)); // ten intervals: no sweep may run
          expect(sweeps(statements)).toBe(0);
        } finally {
          await store.close();
        }
      });
    });
  });
});
