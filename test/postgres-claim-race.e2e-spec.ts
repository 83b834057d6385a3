import { join } from 'node:path';
import { createIdempotencyTable } from '../lib/stores/postgres';
import type { ClaimerMessage, ClaimerTally } from './concurrency/claimer.protocol';
import type { PostgresClaimerConfig } from './concurrency/postgres-claimer.protocol';
import { forkTs } from './support/fork-ts';
import { createTestDatabase, describeWithPostgres, TestDatabase } from './support/postgres-database';

/**
 * The Postgres claim is atomic across processes and connections, as the Redis one is
 * (test/claim-race.e2e-spec.ts): 4 processes × 8 connections each claim the same 500 keys at the
 * same moment (32 concurrent claimers per key, 16,000 claims) in one table with a long lease. Each
 * process tallies its own answers; summed, every key was ACQUIRED exactly once, and the row holds
 * the token that was told ACQUIRED. (Smaller than the Redis race: every connection is a Postgres
 * backend process, and the server is shared with the other specs.)
 */
const PROCESSES = 4;
const KEYS = 500;
const CLAIMERS_PER_KEY = 8;

describeWithPostgres(
  `claim race: ${PROCESSES} processes x ${KEYS} keys x ${CLAIMERS_PER_KEY} claimers on one Postgres table`,
  () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase('race');
      await createIdempotencyTable(db.pool({ max: 1 }), { table: 'race_keys' });
    });
    afterAll(() => db?.drop());

    it('answers ACQUIRED exactly once per key, by the claimers own tallies', async () => {
      const keyPrefix = `race-${Date.now().toString(36)}`;
      const children = Array.from({ length: PROCESSES }, (_, n) => {
        const config: PostgresClaimerConfig = {
          name: `p${n}`,
          index: n,
          url: db.url,
          table: 'race_keys',
          keyPrefix,
          keys: KEYS,
          claimersPerKey: CLAIMERS_PER_KEY,
          leaseMs: 600_000,
        };
        const child = forkTs(join(__dirname, 'concurrency', 'postgres-claimer.main.ts'), {
          CLAIMER: JSON.stringify(config),
        });
        const stderr: string[] = [];
        child.stderr!.on('data', (chunk) => stderr.push(String(chunk)));
        const messages = new Promise<ClaimerMessage[]>((resolve, reject) => {
          const received: ClaimerMessage[] = [];
          child.on('message', (message: ClaimerMessage) => received.push(message));
          child.once('exit', (code) =>
            code === 0
              ? resolve(received)
              : reject(new Error(`claimer p${n} exited ${code}: ${stderr.join('')}`)),
          );
        });
        const ready = new Promise<void>((resolve) =>
          child.on('message', (message: ClaimerMessage) => message.type === 'ready' && resolve()),
        );
        return { child, ready, messages };
      });
      try {
        await Promise.all(children.map(({ ready }) => ready));
        const startAt = Date.now() + 200;
        for (const { child } of children) child.send({ startAt });
        const tallies = (await Promise.all(children.map(({ messages }) => messages))).map((messages) =>
          messages.find((message): message is ClaimerTally => message.type === 'tally')!,
        );

        const acquiredPerKey = new Array<number>(KEYS).fill(0);
        const winners = new Array<string | null>(KEYS).fill(null);
        const answers = { ACQUIRED: 0, IN_PROGRESS: 0, COMPLETED: 0 };
        for (const tally of tallies) {
          tally.acquired.forEach((count, key) => (acquiredPerKey[key] += count));
          tally.winners.forEach((token, key) => token && (winners[key] = token));
          for (const answer of Object.keys(answers) as Array<keyof typeof answers>)
            answers[answer] += tally.answers[answer];
        }
        const total = PROCESSES * KEYS * CLAIMERS_PER_KEY;
        const winsPerProcess = tallies.map((tally) => tally.acquired.reduce((sum, count) => sum + count, 0));
        console.log(
          `Postgres claim race: ${PROCESSES} processes x ${KEYS} keys x ${CLAIMERS_PER_KEY} claimers = ${total} claims: ` +
            `ACQUIRED ${answers.ACQUIRED}, IN_PROGRESS ${answers.IN_PROGRESS}, COMPLETED ${answers.COMPLETED}; ` +
            `keys won per process ${winsPerProcess.join(' ')}; ${Date.now() - startAt} ms`,
        );
        expect(acquiredPerKey.filter((count) => count !== 1)).toEqual([]);
        expect(answers).toEqual({ ACQUIRED: KEYS, IN_PROGRESS: total - KEYS, COMPLETED: 0 });
        // The winners are spread over the processes (a real race, not one process first)...
        expect(winsPerProcess.filter((wins) => wins > 0).length).toBeGreaterThan(1);
        // ...and each row holds exactly the token its key's winner was told ACQUIRED for.
        const { rows } = await db
          .pool({ max: 1 })
          .query<{ key: string; token: string }>('SELECT key, token FROM race_keys WHERE NOT completed');
        const held = new Map(rows.map((row) => [row.key, row.token]));
        expect(Array.from({ length: KEYS }, (_, key) => held.get(`${keyPrefix}:${key}`) ?? null)).toEqual(
          winners,
        );
      } finally {
        for (const { child } of children) if (child.exitCode === null) child.kill('SIGKILL');
      }
    }, 90_000);
  },
);
