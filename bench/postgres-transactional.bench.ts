import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { AcquireResult } from '../lib/stores';
import { IdempotencyStore } from '../lib';
import { RedisIdempotencyStore } from '../lib/stores/redis';
import { createIdempotencyTable, pgTransactions, PostgresIdempotencyStore } from '../lib/stores/postgres';
import type { TestDatabase } from '../test/support/postgres-database';
import { formatRate, formatRatio } from './bench-harness';
import { flushBenchDb, ioredisClient, OrderPayload } from './bench-redis';
import {
  ContenderResult,
  ContenderRunOptions,
  countedRedis,
  measureContenders,
  StoreContender,
} from './store-contenders';
import type { Redis } from 'ioredis';

/**
 * What transactional handlers cost (`@Idempotent({ transactional: true })`): the three ways of
 * running a handler whose effect is one row in PostgreSQL, as the idempotency layer drives them,
 * with that one-row insert as the handler:
 *
 * - **Redis store**: claim on Redis, the row inserted on a pool connection (committed alone),
 *   completion on Redis;
 * - **pg store**: the same with `PostgresIdempotencyStore` (claim, insert, completion: three commits);
 * - **pg transactional**: `runInTransaction`: BEGIN, claim, SAVEPOINT, insert, RELEASE, COMMIT: one
 *   commit carrying the row and its completion, and no window between them.
 *
 * Round trips are counted at the client, to Postgres and Redis together.
 */

const LEASE_MS = 300_000;
const TTL_MS = 86_400_000;
const KEY_PREFIX = 'idempotency:bench:order_created:';
const INSERT = 'INSERT INTO bench_shipments (order_id) VALUES ($1)';

export type TransactionalContenderId = 'redis' | 'pg' | 'pgTransactional';

export type TransactionalBenchResult = ContenderResult;

export const transactionalCaseId = (
  id: TransactionalContenderId,
  mode: string,
  concurrency: number,
): string => `pg-transactional/${id}/${mode}/c${concurrency}`;

export async function benchTransactionalPostgres(
  database: TestDatabase,
  redisAdmin: Redis,
  options: ContenderRunOptions,
  log: (line: string) => void,
): Promise<{ results: Map<string, TransactionalBenchResult>; close(): Promise<void> }> {
  const pool = database.pool();
  await createIdempotencyTable(pool);
  await pool.query('CREATE TABLE IF NOT EXISTS bench_shipments (order_id text NOT NULL)');
  const resetPg = async () => void (await pool.query('TRUNCATE idempotency_keys, bench_shipments'));
  const redis = ioredisClient();

  const plain =
    (store: IdempotencyStore, contender: () => StoreContender) => async (payload: OrderPayload) => {
      const key = KEY_PREFIX + payload.id;
      const token = randomUUID();
      if ((await store.tryAcquire(key, LEASE_MS, token)) !== AcquireResult.ACQUIRED) return;
      contender().roundTrips++;
      await pool.query(INSERT, [payload.orderId]);
      await store.markComplete(key, TTL_MS, token);
    };

  const redisContender: StoreContender = {
    roundTrips: 0,
    handle: plain(
      new RedisIdempotencyStore(countedRedis(redis, () => redisContender.roundTrips++)),
      () => redisContender,
    ),
    reset: async () => {
      await flushBenchDb(redisAdmin);
      await resetPg();
    },
  };
  const pgContender: StoreContender = {
    roundTrips: 0,
    handle: plain(
      new PostgresIdempotencyStore(
        countedPool(pool, () => pgContender.roundTrips++),
        { sweeper: false },
      ),
      () => pgContender,
    ),
    reset: resetPg,
  };
  const transactionalStore = new PostgresIdempotencyStore(
    pgTransactions(countedPool(pool, () => transactionalContender.roundTrips++)),
    { sweeper: false },
  );
  const transactionalContender: StoreContender = {
    roundTrips: 0,
    handle: (payload) =>
      transactionalStore.runInTransaction!(
        { key: KEY_PREFIX + payload.id, ttlMs: TTL_MS, token: randomUUID(), idleTimeoutMs: LEASE_MS },
        (tx) => (tx as PoolClient).query(INSERT, [payload.orderId]),
      ),
    reset: resetPg,
  };
  const contenders: Record<TransactionalContenderId, StoreContender> = {
    redis: redisContender,
    pg: pgContender,
    pgTransactional: transactionalContender,
  };

  const results = await measureContenders(contenders, transactionalCaseId, options, log);
  return { results, close: async () => void (await redis.quit()) };
}

/** The report's section: records per second, round trips and CPU per message. */
export function renderTransactionalSection(
  results: Map<string, TransactionalBenchResult>,
  concurrencies: number[],
): string[] {
  const get = (id: TransactionalContenderId, mode: string, concurrency: number) =>
    results.get(transactionalCaseId(id, mode, concurrency))!;
  const out = ['## Transactional handlers on Postgres: what the one commit costs', ''];
  out.push(
    'A handler whose effect is one row in PostgreSQL (`INSERT` of one row), three ways: claim and completion on the ' +
      'Redis store around an insert on a `pg` pool; the same on `PostgresIdempotencyStore`; and a transactional ' +
      'handler (`@Idempotent({ transactional: true })`: claim, insert and completion in one transaction). One `pg` ' +
      'pool of 10 connections; round trips counted at the client, to Postgres and Redis together.',
    '',
  );
  out.push(
    '| keys | in flight | Redis store | pg store | pg transactional | transactional / Redis | transactional / pg |',
  );
  out.push('|---|---:|---:|---:|---:|---:|---:|');
  for (const concurrency of concurrencies) {
    for (const mode of ['unique', 'repeated']) {
      const [redis, pg, tx] = (['redis', 'pg', 'pgTransactional'] as const).map(
        (id) => get(id, mode, concurrency).perSecond,
      );
      out.push(
        `| ${mode} | ${concurrency} | ${[redis, pg, tx].map(formatRate).join(' | ')} | ` +
          `${formatRatio(tx / redis)} | ${formatRatio(tx / pg)} |`,
      );
    }
  }
  out.push(
    '',
    '| keys | in flight | round trips: Redis store | pg store | pg transactional | CPU µs: Redis | pg | transactional |',
  );
  out.push('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const concurrency of concurrencies) {
    for (const mode of ['unique', 'repeated']) {
      const rows = (['redis', 'pg', 'pgTransactional'] as const).map((id) => get(id, mode, concurrency));
      out.push(
        `| ${mode} | ${concurrency} | ${rows.map((row) => row.roundTripsPerMessage.toFixed(2)).join(' | ')} | ` +
          `${rows.map((row) => row.cpuMicros.toFixed(1)).join(' | ')} |`,
      );
    }
  }
  out.push(
    '',
    '- A first sighting in transactional mode makes 6 round trips (BEGIN, claim, SAVEPOINT, the insert, RELEASE,',
    '  COMMIT) against 3 (claim, insert, complete), but one commit instead of three: with `synchronous_commit = on`',
    '  the WAL flush, not the round trip, is what a write pays on most disks.',
    '- A duplicate costs 3 round trips (BEGIN, claim, ROLLBACK) against 1: the claim answers from the committed',
    '  row, as the plain claim does, but inside a transaction.',
    '',
  );
  return out;
}

/** The pool, counting every statement sent through it, and through the connections it lends. */
function countedPool(pool: Pool, count: () => void): Pool {
  const countedClient = (client: PoolClient): PoolClient =>
    new Proxy(client, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'query') return typeof value === 'function' ? value.bind(target) : value;
        return (...args: unknown[]) => {
          count();
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  return new Proxy(pool, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property === 'query') {
        return (...args: unknown[]) => {
          count();
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      if (property === 'connect') return async () => countedClient(await target.connect());
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
