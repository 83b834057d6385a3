import { Injectable, Module } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { IsString } from 'class-validator';
import type { Pool, PoolClient } from 'pg';
import { Client } from 'pg';
import { AcquireResult } from '../lib/stores';
import {
  Idempotent,
  IdempotencyConfigurationError,
  IdempotencyModule,
  IdempotencyTransaction,
  InMemoryIdempotencyStore,
  SkipMessageException,
  SqsContext,
  SqsEvent,
  SqsMessageHandler,
} from '../lib';
import { IdempotencyStats } from '../lib/center';
import { buildLambdaContext, buildSqsEvent, buildSqsRecord } from '../lib/testing';
import { createIdempotencyTable, PostgresIdempotencyStore } from '../lib/stores/postgres';
import { deferred } from './fixtures/orders.fixture';
import { createTestDatabase, TestDatabase } from './support/postgres-database';
import { requires } from './support/prerequisites';
import { waitFor } from './support/sqs-queues';
import { createTestApp } from './support/test-app';
import { usePollingHarness } from './support/polling-harness';
import { useLambdaSandboxes } from './support/lambda-sandboxes';

/**
 * Transactional handlers (`@Idempotent({ transactional: true })`) on a real PostgreSQL: the claim,
 * the handler's writes and the completion commit together or not at all, behind both hosts (a
 * Lambda function and polling instances on fauxqs), with `pg` and with TypeORM; a copy arriving
 * while the first transaction is open answers IN_PROGRESS at once; a handler that throws leaves
 * neither its rows nor the claim; a skip leaves the completion only.
 */
const postgres = requires('postgres');

@SqsEvent('parcel_shipped')
class ParcelShipped {
  @IsString() id!: string;
  @IsString() parcel!: string;
}

/** How a test scripts the handler: per parcel, a promise to wait on once the row is written. */
const holds = new Map<string, Promise<void>>();
/** Per parcel, how many next attempts fail after writing their row. */
const failures = new Map<string, number>();
const entered: string[] = [];
const sameTransaction: boolean[] = [];

@Injectable()
class Parcels {
  @SqsMessageHandler(ParcelShipped)
  @Idempotent({ transactional: true })
  async onShipped(
    event: ParcelShipped,
    ctx: SqsContext,
    @IdempotencyTransaction() tx: PoolClient,
  ): Promise<void> {
    entered.push(event.id);
    sameTransaction.push(ctx.state.transaction === tx);
    await tx.query('INSERT INTO parcels (event_id, parcel) VALUES ($1, $2)', [event.id, event.parcel]);
    await holds.get(event.parcel);
    const failing = failures.get(event.parcel) ?? 0;
    if (failing > 0) {
      failures.set(event.parcel, failing - 1);
      throw new Error(`the carrier is down for ${event.parcel}`);
    }
    if (event.parcel === 'rejected') throw new Error('the carrier rejected the parcel');
    if (event.parcel === 'skipped') throw new SkipMessageException('nothing to ship');
  }
}

const parcel = (id: string, name = `parcel-${id}`) =>
  buildSqsRecord({ type: 'parcel_shipped', id, parcel: name }, { queue: 'parcels' });

postgres.describe('Transactional handlers on PostgresIdempotencyStore', () => {
  let db: TestDatabase;
  let pool: Pool;
  beforeAll(async () => {
    db = await createTestDatabase('transactional');
    pool = db.pool({ max: 6 });
    await createIdempotencyTable(pool);
    await pool.query('CREATE TABLE parcels (event_id text NOT NULL, parcel text NOT NULL)');
  });
  afterAll(() => db?.drop());
  beforeEach(() => {
    holds.clear();
    failures.clear();
    entered.length = 0;
    sameTransaction.length = 0;
  });

  /** The effect rows of event `id`, and its idempotency row, as committed. */
  const committed = async (id: string) => {
    const effects = await pool.query<{ parcel: string }>('SELECT parcel FROM parcels WHERE event_id = $1', [
      id,
    ]);
    const claim = await pool.query<{ completed: boolean }>(
      `SELECT completed FROM idempotency_keys WHERE key LIKE '%:' || $1 AND (expires_at IS NULL OR expires_at > now())`,
      [id],
    );
    return { effects: effects.rows.map((row) => row.parcel), completed: claim.rows[0]?.completed };
  };

  describe('the store, on its own', () => {
    const claimOf = (key: string) => ({
      key: `unit:${key}`,
      ttlMs: 60_000,
      token: key,
      idleTimeoutMs: 60_000,
    });

    it('answers a second claim of a key whose transaction is open with IN_PROGRESS, without waiting for it', async () => {
      const store = new PostgresIdempotencyStore(pool, { sweeper: false });
      const release = deferred();
      let inside!: () => void;
      const handlerEntered = new Promise<void>((resolve) => (inside = resolve));
      const first = store.runInTransaction!(claimOf('open'), async () => {
        inside();
        await release.promise;
        return 'first';
      });
      await handlerEntered;

      const started = performance.now();
      const second = await store.runInTransaction!(claimOf('open'), async () => 'second');
      const elapsedMs = performance.now() - started;
      expect(second).toEqual({ answer: AcquireResult.IN_PROGRESS });
      // Bounded by the round trips, not by the first transaction (still open, for as long as the test wants).
      expect(elapsedMs).toBeLessThan(15_000); // the first stays open until released: waiting for it would never end

      release.resolve();
      expect(await first).toEqual({ answer: AcquireResult.ACQUIRED, result: 'first' });
      expect(await store.runInTransaction!(claimOf('open'), async () => 'third')).toEqual({
        answer: AcquireResult.COMPLETED,
      });
    });

    it('frees the key at once when the connection holding it dies mid-handler (pg_terminate_backend)', async () => {
      const store = new PostgresIdempotencyStore(pool, { sweeper: false });
      const release = deferred();
      let pid = 0;
      const doomed = store.runInTransaction!(claimOf('killed'), async (tx) => {
        pid = (await (tx as PoolClient).query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
        await (tx as PoolClient).query("INSERT INTO parcels VALUES ('killed', 'lost')");
        await release.promise;
      });
      await waitFor(() => pid !== 0, 'the handler to start');
      await pool.query('SELECT pg_terminate_backend($1)', [pid]);
      release.resolve();
      await expect(doomed).rejects.toThrow();

      // No lease to wait out: the next claim wins at once, and the first attempt left nothing.
      expect(await store.runInTransaction!(claimOf('killed'), async () => 'again')).toEqual({
        answer: AcquireResult.ACQUIRED,
        result: 'again',
      });
      expect((await committed('killed')).effects).toEqual([]);
    });

    it('ends a transaction left idle past its bound (inProgressTtl), rolling back the claim', async () => {
      const store = new PostgresIdempotencyStore(pool, { sweeper: false });
      const release = deferred();
      const stuck = store.runInTransaction!({ ...claimOf('stuck'), idleTimeoutMs: 300 }, async (tx) => {
        await (tx as PoolClient).query("INSERT INTO parcels VALUES ('stuck', 'stuck')");
        await release.promise;
      });
      // While the transaction is open, copies answer IN_PROGRESS; once the server ended it, a copy wins.
      const next = await waitFor(
        async () => {
          const answer = await store.runInTransaction!(claimOf('stuck'), async () => 'next');
          return answer.answer === AcquireResult.ACQUIRED ? answer : undefined;
        },
        'the server to end the idle transaction',
        30_000,
      );
      expect(next).toEqual({ answer: AcquireResult.ACQUIRED, result: 'next' });
      release.resolve();
      await expect(stuck).rejects.toThrow();
      expect((await committed('stuck')).effects).toEqual([]);
    });

    it('refuses to ack a handler that resolved inside an aborted transaction (a failed statement it caught)', async () => {
      const store = new PostgresIdempotencyStore(pool, { sweeper: false });
      const attempt = store.runInTransaction!(claimOf('aborted'), async (tx) => {
        await (tx as PoolClient).query("INSERT INTO parcels VALUES ('aborted', 'x')");
        await (tx as PoolClient).query('SELECT 1/0').catch(() => undefined);
      });
      const error = await attempt.then(
        () => undefined,
        (thrown: Error) => thrown,
      );
      expect(error?.message).toBe(
        'the handler resolved, but a statement in its transaction had failed, which aborted the transaction: ' +
          'nothing it wrote was committed, and neither was the completion. Let the error out of the handler ' +
          '(or roll back to a savepoint of your own before going on).',
      );
      // What failed, for the operator: PostgreSQL's "in failed transaction" answer to RELEASE SAVEPOINT.
      expect(error?.cause).toMatchObject({ code: '25P02' });
      expect(await committed('aborted')).toEqual({ effects: [], completed: undefined });
    });

    it('lets a connection lost after the handler resolved fail the record as it is, not as an aborted transaction', async () => {
      const store = new PostgresIdempotencyStore(pool, { sweeper: false });
      const attempt = store.runInTransaction!(claimOf('lost'), async (tx) => {
        const { rows } = await (tx as PoolClient).query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await pool.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
      });
      const error = await attempt.then(
        () => undefined,
        (thrown: Error) => thrown,
      );
      expect(error).toBeDefined();
      expect(error?.message).not.toMatch(/a statement in its transaction had failed/);
      expect(await committed('lost')).toEqual({ effects: [], completed: undefined });
    });
  });

  describe('the Lambda host', () => {
    // A Lambda function's module: the store made from the environment, its pool running the transactions.
    @Module({
      imports: [
        IdempotencyModule.forRootAsync({
          useFactory: () => ({
            store: new PostgresIdempotencyStore(process.env.PARCELS_DATABASE_URL!),
            service: 'parcels',
            stats: {},
          }),
        }),
      ],
      providers: [Parcels],
    })
    class ParcelsFunction {}

    const { sandbox } = useLambdaSandboxes(() => ParcelsFunction);
    beforeAll(() => (process.env.PARCELS_DATABASE_URL = db.url));

    it('commits the effect and the completion together; a copy is acked without running', async () => {
      const lambda = sandbox();
      expect(await lambda(buildSqsEvent([parcel('t1')]), buildLambdaContext())).toEqual({
        batchItemFailures: [],
      });
      expect(await committed('t1')).toEqual({ effects: ['parcel-t1'], completed: true });
      expect(sameTransaction).toEqual([true]);

      expect(await sandbox()(buildSqsEvent([parcel('t1')]), buildLambdaContext())).toEqual({
        batchItemFailures: [],
      });
      expect(entered).toEqual(['t1']);
      expect((await committed('t1')).effects).toEqual(['parcel-t1']);
    });

    it('rolls back the effect and the claim of a handler that throws; the redelivery runs again', async () => {
      const lambda = sandbox();
      const rejected = parcel('t2', 'rejected');
      expect(await lambda(buildSqsEvent([rejected]), buildLambdaContext())).toEqual({
        batchItemFailures: [{ itemIdentifier: rejected.messageId }],
      });
      expect(await committed('t2')).toEqual({ effects: [], completed: undefined });

      expect(await lambda(buildSqsEvent([parcel('t2')]), buildLambdaContext())).toEqual({
        batchItemFailures: [],
      });
      expect(await committed('t2')).toEqual({ effects: ['parcel-t2'], completed: true });
    });

    it('commits the completion only when the handler skips the message', async () => {
      const lambda = sandbox();
      expect(await lambda(buildSqsEvent([parcel('t3', 'skipped')]), buildLambdaContext())).toEqual({
        batchItemFailures: [],
      });
      expect(await committed('t3')).toEqual({ effects: [], completed: true });
      await lambda(buildSqsEvent([parcel('t3')]), buildLambdaContext());
      expect(entered).toEqual(['t3']);
    });

    it('answers a copy arriving while the first transaction is open with IN_PROGRESS, quickly', async () => {
      const [one, two] = [sandbox(), sandbox()];
      const hold = deferred();
      holds.set('held', hold.promise);
      const first = one(buildSqsEvent([parcel('t4', 'held')]), buildLambdaContext());
      await waitFor(() => entered.includes('t4'), 'the first attempt in its handler');

      const copy = parcel('t4', 'held');
      const started = performance.now();
      const answer = await two(buildSqsEvent([copy]), buildLambdaContext());
      const elapsedMs = performance.now() - started;
      expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: copy.messageId }] });
      expect(elapsedMs).toBeLessThan(15_000); // the first stays open until released: waiting for it would never end
      const stats = await (await two.getApp()).get(IdempotencyStats).snapshot();
      expect(stats.totals.duplicates_in_flight).toBe(1);

      hold.resolve();
      expect(await first).toEqual({ batchItemFailures: [] });
      expect(await committed('t4')).toEqual({ effects: ['held'], completed: true });
      expect(entered).toEqual(['t4']);
    });
  });

  describe('the polling host, on fauxqs', () => {
    const polling = usePollingHarness();
    const { queues } = polling;

    it('applies each event once across two instances, through copies, a held attempt and a failure retried', async () => {
      const queue = await queues.create('pg-transactional', { visibilityTimeout: 1 });
      const apps: TestingModule[] = [];
      for (let i = 0; i < 2; i++) {
        apps.push(
          await polling.startApp({
            idempotency: {
              store: new PostgresIdempotencyStore(db.url),
              service: 'parcels-polling',
              stats: {},
            },
            visibilityTimeout: 1,
            queues: [{ name: 'parcels', url: queue.url }],
            providers: [Parcels],
          }),
        );
      }
      const hold = deferred();
      holds.set('held-p', hold.promise);
      const body = (id: string, name: string) => ({ type: 'parcel_shipped', id, parcel: name });
      failures.set('flaky-p', 1);
      await queues.sendBatch(queue.url, [
        body('p1', 'p1'),
        body('p1', 'p1'),
        body('p2', 'held-p'),
        body('p3', 'flaky-p'),
      ]);
      await queues.sendBatch(queue.url, [body('p2', 'held-p'), body('p1', 'p1')]);
      const inFlight = async () => {
        const snapshots = await Promise.all(apps.map((app) => app.get(IdempotencyStats).snapshot()));
        return snapshots.reduce((sum, snapshot) => sum + snapshot.totals.duplicates_in_flight, 0);
      };
      await waitFor(async () => (await inFlight()) >= 1, 'a copy of p2 refused while p2 is held');
      hold.resolve();
      await waitFor(
        async () =>
          (await queues.depth(queue.url)) === 0 &&
          (await Promise.all(['p1', 'p2', 'p3'].map(committed))).every((state) => state.completed === true),
        'every copy acked and every event completed',
        20_000,
      );
      expect((await committed('p1')).effects).toEqual(['p1']);
      expect((await committed('p2')).effects).toEqual(['held-p']);
      // p3's first attempt failed after writing its row: only the retry's row is there.
      expect((await committed('p3')).effects).toEqual(['flaky-p']);
      expect(entered.filter((id) => id === 'p3')).toHaveLength(2);
    });
  });

  describe('configuration', () => {
    it('stops the app when a transactional handler has a store that cannot run transactions', async () => {
      await expect(
        createTestApp({
          idempotency: { store: new InMemoryIdempotencyStore() },
          providers: [Parcels],
        }),
      ).rejects.toThrow(
        new IdempotencyConfigurationError(
          '@Idempotent() on Parcels.onShipped: transactional: true needs a store that runs the handler in a database ' +
            'transaction, and the store InMemoryIdempotencyStore cannot (it has no runInTransaction). Use ' +
            'PostgresIdempotencyStore from nestjs-idempotent-sqs/postgres on a pg Pool or a connection string (new ' +
            "PostgresIdempotencyStore(pool)), or on typeOrmTransactions(dataSource) for TypeORM, with the handler's " +
            'tables in the same database; or drop transactional to settle the claim after the handler as other stores do.',
        ),
      );
    });

    it('refuses a Postgres store on a lone Client (it lends no connections), and heartbeat', async () => {
      const client = new Client({ connectionString: db.url });
      const lone = new PostgresIdempotencyStore(client, { sweeper: false });
      expect(lone.runInTransaction).toBeUndefined();
      await expect(
        createTestApp({ idempotency: { store: lone, service: 'x' }, providers: [Parcels] }),
      ).rejects.toThrow(/the store PostgresIdempotencyStore cannot \(it has no runInTransaction\)/);
      await expect(
        createTestApp({
          idempotency: {
            store: new PostgresIdempotencyStore(pool, { sweeper: false }),
            service: 'x',
            heartbeat: true,
          },
          providers: [Parcels],
        }),
      ).rejects.toThrow(/transactional: true cannot be combined with heartbeat.*Set heartbeat: false/);
    });
  });
});
