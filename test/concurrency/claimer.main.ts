/**
 * One claimer process of the claim race (test/claim-race-processes.long-spec.ts): `claimersPerKey`
 * connections (Redis), clients (DynamoDB) or one-connection pools (Postgres), each with its own store, all claiming every key at
 * once when the controller says "go". It reports what it got, answer by answer; the controller sums
 * the tallies.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { AcquireResult, IdempotencyStore } from '../../lib/stores/idempotency-store.interface';
import { DynamoDbIdempotencyStore } from '../../lib/stores/dynamodb';
import { PostgresIdempotencyStore } from '../../lib/stores/postgres';
import { RedisIdempotencyStore, recommendedIoRedisOptions } from '../../lib/stores/redis';
import type { ClaimerConfig, ClaimerMessage, ClaimerTally } from './claimer.protocol';

/** Claims in flight per claimer. */
const WINDOW = 20;

async function main(): Promise<void> {
  const config = JSON.parse(process.env.CLAIMER ?? '') as ClaimerConfig;
  const { stores, close } = await connect(config);
  const send = (message: ClaimerMessage) => process.send!(message);

  process.once('message', async ({ startAt }: { startAt: number }) => {
    // Every process starts at the same wall-clock moment, so their claims really overlap.
    await new Promise((resolve) => setTimeout(resolve, startAt - Date.now()));
    const tally: ClaimerTally = {
      type: 'tally',
      name: config.name,
      acquired: new Array<number>(config.keys).fill(0),
      winners: new Array<string | null>(config.keys).fill(null),
      answers: { ACQUIRED: 0, IN_PROGRESS: 0, COMPLETED: 0 },
    };
    const claim = async (store: IdempotencyStore, claimer: number, key: number) => {
      const token = `${config.name}/${claimer}/${key}`;
      const answer = await store.tryAcquire(`${config.keyPrefix}:${key}`, config.leaseMs, token);
      tally.answers[answer]++;
      if (answer === AcquireResult.ACQUIRED) {
        tally.acquired[key]++;
        tally.winners[key] = token;
      }
    };
    // Every claimer claims every key, WINDOW at a time, each from its own starting key: the claims
    // of all claimers and processes interleave over the whole run instead of one burst each.
    await Promise.all(
      stores.map(async (store, claimer) => {
        const offset = ((config.index * config.claimersPerKey + claimer) * 37) % config.keys;
        let next = 0;
        const lane = async () => {
          while (next < config.keys) await claim(store, claimer, (offset + next++) % config.keys);
        };
        await Promise.all(Array.from({ length: WINDOW }, lane));
      }),
    );
    await close();
    process.send!(tally, () => process.disconnect());
  });
  send({ type: 'ready' });
}

/** One store per claimer, each on its own connection or client, connected before "go". */
async function connect(
  config: ClaimerConfig,
): Promise<{ stores: IdempotencyStore[]; close(): Promise<void> }> {
  if (config.dynamodb) {
    const { endpoint, tableName } = config.dynamodb;
    const clients = Array.from(
      { length: config.claimersPerKey },
      () =>
        new DynamoDBClient({
          endpoint,
          region: 'us-east-1',
          credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
        }),
    );
    const stores = clients.map((client) => new DynamoDbIdempotencyStore({ tableName, client }));
    // The start-up check: loads the SDK and opens each client's connection before the race.
    await Promise.all(stores.map((store) => store.onModuleInit()));
    return { stores, close: async () => clients.forEach((client) => client.destroy()) };
  }
  if (config.postgres) {
    const { url, table } = config.postgres;
    const pools = Array.from(
      { length: config.claimersPerKey },
      () => new Pool({ connectionString: url, max: 1 }),
    );
    const stores = pools.map((pool) => new PostgresIdempotencyStore(pool, { table, sweeper: false }));
    // The start-up check: connects each pool before the race.
    await Promise.all(stores.map((store) => store.verifyTable()));
    return { stores, close: async () => void (await Promise.all(pools.map((pool) => pool.end()))) };
  }
  const connections = Array.from(
    { length: config.claimersPerKey },
    () => new Redis(config.redisUrl!, recommendedIoRedisOptions),
  );
  await Promise.all(connections.map((redis) => redis.ping()));
  return {
    stores: connections.map((redis) => new RedisIdempotencyStore(redis)),
    close: async () => void (await Promise.all(connections.map((redis) => redis.quit()))),
  };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
