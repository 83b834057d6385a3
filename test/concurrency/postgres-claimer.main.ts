/**
 * One claimer process of the Postgres claim race (test/postgres-claim-race.e2e-spec.ts): the same
 * protocol as the Redis claimer (claimer.main.ts): `claimersPerKey` stores, each on a pool of one
 * connection of its own, all claiming every key at once when the controller says "go"; it reports
 * what it got, answer by answer, and the controller sums the tallies.
 */
import { Pool } from 'pg';
import { AcquireResult } from '../../lib/stores/idempotency-store.interface';
import { PostgresIdempotencyStore } from '../../lib/stores/postgres';
import type { ClaimerMessage, ClaimerTally } from './claimer.protocol';
import type { PostgresClaimerConfig } from './postgres-claimer.protocol';

/** Claims in flight per claimer (its one connection runs them one after the other). */
const WINDOW = 4;

async function main(): Promise<void> {
  const config = JSON.parse(process.env.CLAIMER ?? '') as PostgresClaimerConfig;
  const pools = Array.from(
    { length: config.claimersPerKey },
    () => new Pool({ connectionString: config.url, max: 1 }),
  );
  const stores = pools.map(
    (pool) => new PostgresIdempotencyStore(pool, { table: config.table, sweeper: false }),
  );
  // Connected and the table checked before "go": the race measures claims, not connection set-up.
  await Promise.all(stores.map((store) => store.verifyTable()));

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
    await Promise.all(
      stores.map(async (store, claimer) => {
        // Each claimer walks every key from its own starting point, so the claimers interleave.
        const offset = ((config.index * config.claimersPerKey + claimer) * 37) % config.keys;
        let next = 0;
        const lane = async () => {
          while (next < config.keys) {
            const key = (offset + next++) % config.keys;
            const token = `${config.name}/${claimer}/${key}`;
            const answer = await store.tryAcquire(`${config.keyPrefix}:${key}`, config.leaseMs, token);
            tally.answers[answer]++;
            if (answer === AcquireResult.ACQUIRED) {
              tally.acquired[key]++;
              tally.winners[key] = token;
            }
          }
        };
        await Promise.all(Array.from({ length: WINDOW }, lane));
      }),
    );
    await Promise.all(pools.map((pool) => pool.end()));
    process.send!(tally, () => process.disconnect());
  });
  process.send!({ type: 'ready' } satisfies ClaimerMessage);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
