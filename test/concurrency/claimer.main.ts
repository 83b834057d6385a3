/**
 * One claimer process of the claim race (test/claim-race.e2e-spec.ts): `claimersPerKey`
 * connections, each with its own RedisIdempotencyStore, all claiming every key at once when the
 * controller says "go". It reports what it got, answer by answer; the controller sums the tallies.
 */
import { Redis } from 'ioredis';
import { AcquireResult } from '../../lib/stores/idempotency-store.interface';
import { RedisIdempotencyStore, recommendedIoRedisOptions } from '../../lib/stores/redis-idempotency.store';
import type { ClaimerConfig, ClaimerMessage, ClaimerTally } from './claimer.protocol';

/** Claims in flight per claimer. */
const WINDOW = 20;

async function main(): Promise<void> {
  const config = JSON.parse(process.env.CLAIMER ?? '') as ClaimerConfig;
  const connections = Array.from(
    { length: config.claimersPerKey },
    () => new Redis(config.redisUrl, recommendedIoRedisOptions),
  );
  await Promise.all(connections.map((redis) => redis.ping()));
  const stores = connections.map((redis) => new RedisIdempotencyStore(redis));
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
    const claim = async (store: RedisIdempotencyStore, claimer: number, key: number) => {
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
    await Promise.all(connections.map((redis) => redis.quit()));
    process.send!(tally, () => process.disconnect());
  });
  send({ type: 'ready' });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
