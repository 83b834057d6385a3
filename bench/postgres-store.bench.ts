import type { Pool } from 'pg';
import { RedisIdempotencyStore } from '../lib/stores/redis';
import {
  createIdempotencyTable,
  PgQueryable,
  PgQueryConfig,
  PostgresIdempotencyStore,
} from '../lib/stores/postgres';
import { formatRate, formatRatio } from './bench-harness';
import { flushBenchDb, handlerOverStore, ioredisClient } from './bench-redis';
import {
  ContenderResult,
  countedRedis,
  ContenderRunOptions,
  measureContenders,
  StoreContender,
} from './store-contenders';
import type { Redis } from 'ioredis';
import { createDatabase, TestDatabase } from '../test/support/postgres-database';

/**
 * The Postgres store against the Redis store, as `@Idempotent()` drives them (tryAcquire, no-op
 * handler, markComplete: `handlerOverStore`, the step of the other benches): messages per second, this process's CPU per message, and round trips per
 * message, counted at the client (statements sent to Postgres, commands sent to Redis), not assumed.
 * Postgres runs in a database of its own on BENCH_PG_URL (default: the local server), created for
 * the run and dropped after it.
 */

export const BENCH_PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export type StoreContenderId = 'pg' | 'pgUnprepared' | 'pgAsyncCommit' | 'redis';

export type PostgresBenchResult = ContenderResult;

/** A database of the benchmark's own (dropped by `drop()`), and the server's version. */
export async function openBenchDatabase(): Promise<TestDatabase & { version: string }> {
  const database = await createDatabase(BENCH_PG_URL, 'bench');
  const pool = database.pool({ max: 1 });
  const version = (await pool.query('SHOW server_version')).rows[0].server_version as string;
  return { ...database, version };
}

export async function benchPostgresStore(
  database: TestDatabase,
  redisAdmin: Redis,
  options: ContenderRunOptions,
  log: (line: string) => void,
): Promise<{ results: Map<string, PostgresBenchResult>; close(): Promise<void> }> {
  const pgContender = async (
    preparedStatements: boolean,
    synchronousCommit = true,
  ): Promise<StoreContender> => {
    // pg's default pool size (10): what `new PostgresIdempotencyStore(url)` gets.
    const pool = database.pool(synchronousCommit ? {} : { options: '-c synchronous_commit=off' });
    await createIdempotencyTable(pool);
    const contender: StoreContender = {
      roundTrips: 0,
      handle: handlerOverStore(
        new PostgresIdempotencyStore(
          counted(pool, () => contender.roundTrips++),
          { sweeper: false, preparedStatements },
        ),
      ),
      reset: async () => void (await pool.query('TRUNCATE idempotency_keys')),
    };
    return contender;
  };
  const redis = ioredisClient();
  const redisContender: StoreContender = {
    roundTrips: 0,
    handle: handlerOverStore(
      new RedisIdempotencyStore(countedRedis(redis, () => redisContender.roundTrips++)),
    ),
    reset: () => flushBenchDb(redisAdmin),
  };
  const contenders: Record<StoreContenderId, StoreContender> = {
    pg: await pgContender(true),
    pgUnprepared: await pgContender(false),
    pgAsyncCommit: await pgContender(true, false),
    redis: redisContender,
  };

  const results = await measureContenders(contenders, postgresCaseId, options, log);
  return {
    results,
    close: async () => void (await redis.quit()),
  };
}

export const postgresCaseId = (contender: StoreContenderId, mode: string, concurrency: number): string =>
  `pg-bench/${contender}/${mode}/c${concurrency}`;

/** The pool, counting every statement sent through it. */
function counted(pool: Pool, count: () => void): PgQueryable {
  return {
    query: (config: PgQueryConfig) => {
      count();
      return pool.query(config as never) as never;
    },
  };
}

/** The report's section: the table, then what the figures mean. */
export function renderPostgresSection(
  results: Map<string, PostgresBenchResult>,
  concurrencies: number[],
  postgresVersion: string,
): string[] {
  const get = (id: StoreContenderId, mode: string, concurrency: number) =>
    results.get(postgresCaseId(id, mode, concurrency))!;
  const out = ['## Postgres store vs Redis store', ''];
  out.push(
    `PostgreSQL ${postgresVersion} and Redis on the same machine, the same no-op handler, ` +
      "`PostgresIdempotencyStore` on a `pg` pool of 10 connections (pg's default), `RedisIdempotencyStore` on one " +
      'ioredis connection with `recommendedIoRedisOptions`. Round trips are counted at the client (statements sent, ' +
      'commands sent) per message.',
    '',
    "- **pg**: the store as shipped (prepared statements, the server's `synchronous_commit = on`: every write " +
      'waits for its WAL flush);',
    '- **pg, unprepared**: `preparedStatements: false` (what a pooler without prepared statements costs);',
    '- **pg, async commit**: a pool whose connections set `synchronous_commit = off` (a crash of the *database* may ' +
      'lose its last few hundred milliseconds of claims and completions; nearer to what Redis without AOF promises).',
    '',
  );
  const header = ['keys', 'in flight', 'pg', 'pg, unprepared', 'pg, async commit', 'Redis', 'pg / Redis'];
  out.push(`| ${header.join(' | ')} |`, '|---|---:|---:|---:|---:|---:|---:|');
  for (const concurrency of concurrencies) {
    for (const mode of ['unique', 'repeated']) {
      const [pg, unprepared, asyncCommit, redis] = (
        ['pg', 'pgUnprepared', 'pgAsyncCommit', 'redis'] as const
      ).map((id) => get(id, mode, concurrency).perSecond);
      out.push(
        `| ${mode} | ${concurrency} | ${[pg, unprepared, asyncCommit, redis].map(formatRate).join(' | ')} | ` +
          `${formatRatio(pg / redis)} |`,
      );
    }
  }
  out.push('', '### Round trips and CPU time of the Node process per message', '');
  out.push('| keys | in flight | pg: round trips | Redis: round trips | pg: CPU µs | Redis: CPU µs |');
  out.push('|---|---:|---:|---:|---:|---:|');
  for (const concurrency of concurrencies) {
    for (const mode of ['unique', 'repeated']) {
      const pg = get('pg', mode, concurrency);
      const redis = get('redis', mode, concurrency);
      out.push(
        `| ${mode} | ${concurrency} | ${pg.roundTripsPerMessage.toFixed(2)} | ${redis.roundTripsPerMessage.toFixed(2)} | ` +
          `${pg.cpuMicros.toFixed(1)} | ${redis.cpuMicros.toFixed(1)} |`,
      );
    }
  }
  out.push('', ...POSTGRES_NOTES);
  return out;
}

/** What the Postgres figures mean; true of every run, whatever its numbers. */
const POSTGRES_NOTES = [
  '- Both stores make the same round trips: two per first sighting (claim, complete), one per duplicate. A',
  '  duplicate costs Postgres a read only (the claim answers from the row it finds, taking no lock), so it runs',
  '  at about the speed of a round trip. A first sighting is two writes, and with `synchronous_commit = on` each',
  "  waits for its WAL record to reach the disk: the disk's flush time (see `pg_test_fsync`), not the",
  '  statement, sets the pace at one in flight; with more in flight, commits share flushes (group commit).',
  '- Preparing the statements saves the server a parse and a plan per statement: the claim is a CTE, the',
  '  costliest of the four to plan.',
  '',
];
