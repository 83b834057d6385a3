import { makeIdempotent, IdempotencyConfig } from '@aws-lambda-powertools/idempotency';
import { CachePersistenceLayer } from '@aws-lambda-powertools/idempotency/cache';
import { createClient } from '@redis/client';
import type { Context } from 'aws-lambda';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { AcquireResult, FingerprintClaim } from '../lib/stores';
import { IdempotencyStore } from '../lib';
import { RedisIdempotencyStore, recommendedIoRedisOptions } from '../lib/stores/redis';

/**
 * The three contenders of the Redis benchmark, each handling one SQS-like payload per call with a
 * no-op handler:
 *   (a) RedisIdempotencyStore: tryAcquire, handler, markComplete (what `@Idempotent()` does);
 *   (b) the floor: raw ioredis `SET key token NX PX lease`, handler, `SET key 1 PX ttl`;
 *   (c) Powertools idempotency: `makeIdempotent` with its cache persistence layer on @redis/client.
 * All talk to the same Redis database, over one connection each, with the same lease and ttl;
 * (a) and (b) use the same ioredis settings.
 */

/** The Redis the benchmark uses, and the database index it may flush (never the whole server). */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const BENCH_DB = Number(process.env.BENCH_REDIS_DB ?? 15);

const LEASE_MS = 300_000;
const TTL_MS = 86_400_000;
/** A Lambda always has its name in the environment; Powertools puts it in every key, and so does the module. */
export const LAMBDA_FUNCTION_NAME = 'orders-consumer';
/** What `IdempotencyModule` builds for `order_created` with the default keyPrefix, on that Lambda. */
const KEY_PREFIX = `idempotency:${LAMBDA_FUNCTION_NAME}:order_created:`;

export interface OrderPayload {
  id: string;
  orderId: string;
  amount: number;
}

export const newPayload = (): OrderPayload => ({ id: randomUUID(), orderId: `o-${randomUUID()}`, amount: 5 });

/** One contender: handles a payload as a first sighting or a duplicate, whichever it is. */
export interface Contender {
  label: string;
  handle(payload: OrderPayload): Promise<unknown>;
  close(): Promise<void>;
}

const noop = async (): Promise<void> => undefined;

/**
 * An ioredis client on the benchmark database: with the settings the store recommends (and uses
 * for connections it creates), or with ioredis's defaults.
 */
export function ioredisClient(settings: 'recommended' | 'defaults' = 'recommended'): Redis {
  const base = settings === 'recommended' ? recommendedIoRedisOptions : {};
  return new Redis(REDIS_URL, { ...base, db: BENCH_DB });
}

export function storeContender(
  options: { compactKeys?: boolean; client?: 'recommended' | 'defaults' } = {},
): Contender {
  const redis = ioredisClient(options.client);
  const store = new RedisIdempotencyStore(redis, { compactKeys: options.compactKeys });
  return {
    label: 'RedisIdempotencyStore',
    handle: handlerOverStore(store),
    close: async () => void (await redis.quit()),
  };
}

/**
 * What `@Idempotent()` does per message, on `store`: claim, no-op handler, complete. With `claimOf`,
 * what it does for a handler with a `fingerprint` option: the claim keeps the payload's fingerprint.
 */
export function handlerOverStore(
  store: IdempotencyStore,
  claimOf?: (payload: OrderPayload) => FingerprintClaim,
): Contender['handle'] {
  return async (payload) => {
    const key = KEY_PREFIX + payload.id;
    const token = randomUUID();
    const answer = claimOf
      ? await store.tryAcquire(key, LEASE_MS, token, claimOf(payload))
      : await store.tryAcquire(key, LEASE_MS, token);
    const result = typeof answer === 'string' ? answer : answer.result;
    if (result !== AcquireResult.ACQUIRED) return;
    await noop();
    await store.markComplete(key, TTL_MS, token);
  };
}

export function rawContender(client: 'recommended' | 'defaults' = 'recommended'): Contender {
  const redis = ioredisClient(client);
  return {
    label: 'raw ioredis SET NX PX + SET PX',
    async handle(payload) {
      const key = KEY_PREFIX + payload.id;
      if ((await redis.set(key, randomUUID(), 'PX', LEASE_MS, 'NX')) === null) return;
      await noop();
      await redis.set(key, '1', 'PX', TTL_MS);
    },
    close: async () => void (await redis.quit()),
  };
}

export async function powertoolsContender(): Promise<Contender> {
  const client = createClient({ url: REDIS_URL, database: BENCH_DB });
  await client.connect();
  return {
    label: 'Powertools idempotency (cache layer, @redis/client)',
    handle: powertoolsHandler(new CachePersistenceLayer({ client })),
    close: async () => void (await client.quit()),
  };
}

/** Powertools' `makeIdempotent` around the no-op handler, keyed by `id`, on `persistenceStore`. */
export function powertoolsHandler(
  persistenceStore: NonNullable<Parameters<typeof makeIdempotent>[1]>['persistenceStore'],
): Contender['handle'] {
  process.env.AWS_LAMBDA_FUNCTION_NAME = LAMBDA_FUNCTION_NAME;
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'id', expiresAfterSeconds: TTL_MS / 1000 });
  // As a Lambda handler does on every invocation: the in-progress lock then expires with the
  // invocation (and Powertools stops warning that it cannot tell the remaining time).
  config.registerLambdaContext({ getRemainingTimeInMillis: () => 30_000 } as Context);
  const processRecord = makeIdempotent(noop as (payload: OrderPayload) => Promise<void>, {
    persistenceStore,
    config,
  });
  return (payload) => processRecord(payload);
}

/** `used_memory` of the server, in bytes. */
export async function usedMemory(redis: Redis): Promise<number> {
  const match = /^used_memory:(\d+)/m.exec(await redis.info('memory'));
  if (!match) throw new Error('INFO memory has no used_memory');
  return Number(match[1]);
}

/** Empties the benchmark's own database (FLUSHDB on BENCH_DB only, synchronously). */
export async function flushBenchDb(redis: Redis): Promise<void> {
  if ((redis.options.db ?? 0) !== BENCH_DB)
    throw new Error('refusing to flush a database that is not BENCH_DB');
  await redis.flushdb('SYNC');
}
