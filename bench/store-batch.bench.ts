import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { AcquireResult } from '../lib/stores';
import { IdempotencyStore, InMemoryIdempotencyStore } from '../lib';
import { RedisIdempotencyStore, recommendedIoRedisOptions } from '../lib/stores/redis';
import { BenchCase, measureOps, Result, runRounds, settleCount } from './bench-harness';

/**
 * The batch store methods at store level, before the pipeline uses them: a batch of 10 unique keys
 * claimed and completed (what a 10-record batch of first sightings needs), 8 batches in flight, as
 *   - `tryAcquireMany` + `markCompleteMany` (one script call each per batch);
 *   - 10 concurrent `tryAcquire` + 10 concurrent `markComplete` (what the pipeline does today: the
 *     records of a batch run concurrently, and auto-pipelining writes their commands together);
 *   - raw ioredis, the floor: 10 concurrent `SET key token NX PX lease`, then 10 `SET key 1 PX ttl`
 *     (no token check on completion, no answer about what held the key).
 * The same ioredis settings for all (`recommendedIoRedisOptions`), one private Redis; and the
 * in-memory store's single calls, for the CPU of the calls alone (it has no batch methods: a batch
 * would save it no round trip).
 */

const KEYS_PER_BATCH = 10;
const IN_FLIGHT = 8;
const LEASE_MS = 300_000;
const TTL_MS = 86_400_000;

export const STORE_BATCH_CASES = ['redisBatch', 'redisSingles', 'rawIoredis', 'inMemorySingles'] as const;
export type StoreBatchCase = (typeof STORE_BATCH_CASES)[number];
export type StoreBatchResults = Record<StoreBatchCase, Result>;

type Batch = (keys: string[]) => Promise<void>;

const expectAcquired = (answers: AcquireResult[]) => {
  if (answers.some((answer) => answer !== AcquireResult.ACQUIRED))
    throw new Error('a fresh key was not acquired');
};

/** Claim and complete every key through the batch methods. */
function viaBatchMethods(store: IdempotencyStore): Batch {
  return async (keys) => {
    const claims = keys.map((key) => ({ key, ttlMs: LEASE_MS, token: randomUUID() }));
    expectAcquired(await store.tryAcquireMany!(claims));
    const completions = claims.map(({ key, token }) => ({ key, ttlMs: TTL_MS, token }));
    if ((await store.markCompleteMany!(completions)).includes(false)) throw new Error('a claim was lost');
  };
}

/** Claim and complete every key through the single-key methods, all keys at once. */
function viaSingleCalls(store: IdempotencyStore): Batch {
  return async (keys) => {
    const tokens = keys.map(() => randomUUID());
    expectAcquired(await Promise.all(keys.map((key, i) => store.tryAcquire(key, LEASE_MS, tokens[i]))));
    const completed = await Promise.all(keys.map((key, i) => store.markComplete(key, TTL_MS, tokens[i])));
    if (completed.includes(false)) throw new Error('a claim was lost');
  };
}

function rawIoredis(redis: Redis): Batch {
  return async (keys) => {
    const claimed = await Promise.all(keys.map((key) => redis.set(key, randomUUID(), 'PX', LEASE_MS, 'NX')));
    if (claimed.includes(null)) throw new Error('a fresh key was not acquired');
    await Promise.all(keys.map((key) => redis.set(key, '1', 'PX', TTL_MS)));
  };
}

export async function benchStoreBatches(
  redisUrl: string,
  { batches, rounds, warmups }: { batches: number; rounds: number; warmups: number },
  log: (line: string) => void,
): Promise<StoreBatchResults> {
  const clients = STORE_BATCH_CASES.slice(0, 3).map(() => new Redis(redisUrl, recommendedIoRedisOptions));
  const [batchClient, singlesClient, rawClient] = clients;
  const runs: Record<StoreBatchCase, Batch> = {
    redisBatch: viaBatchMethods(new RedisIdempotencyStore(batchClient, { serverCheck: 'off' })),
    redisSingles: viaSingleCalls(new RedisIdempotencyStore(singlesClient, { serverCheck: 'off' })),
    rawIoredis: rawIoredis(rawClient),
    inMemorySingles: viaSingleCalls(new InMemoryIdempotencyStore({ maxKeys: Infinity })),
  };
  try {
    const cases: BenchCase[] = STORE_BATCH_CASES.map((id) => {
      let keys: string[][] = [];
      let settling: string[][] = [];
      const freshKeys = (count: number) =>
        Array.from({ length: count }, () =>
          Array.from(
            { length: KEYS_PER_BATCH },
            () => `idempotency:orders-consumer:order_created:${randomUUID()}`,
          ),
        );
      return {
        id,
        async prepare() {
          await batchClient.flushdb();
          keys = freshKeys(batches);
          settling = freshKeys(settleCount(batches));
        },
        async settle() {
          await measureOps((i) => runs[id](settling[i]), settling.length, IN_FLIGHT);
        },
        async measure() {
          const perBatch = await measureOps((i) => runs[id](keys[i]), batches, IN_FLIGHT);
          return {
            perSecond: perBatch.perSecond * KEYS_PER_BATCH,
            cpuMicros: perBatch.cpuMicros / KEYS_PER_BATCH,
          };
        },
      };
    });
    const results = await runRounds(cases, {
      rounds,
      warmups,
      onRound: (round) => log(round < 0 ? '  warm-up round' : `  round ${round + 1}/${rounds}`),
      paceCheck: true,
    });
    return Object.fromEntries(STORE_BATCH_CASES.map((id) => [id, results.get(id)!])) as StoreBatchResults;
  } finally {
    await Promise.all(clients.map((client) => client.quit()));
  }
}

export const STORE_BATCH_SHAPE = { keysPerBatch: KEYS_PER_BATCH, inFlight: IN_FLIGHT };
