import { BatchGetItemCommand } from '@aws-sdk/client-dynamodb';
import { Redis } from 'ioredis';
import type { ClaimerConfig } from './concurrency/claimer.protocol';
import { buildSqsRecord, SqsTestClient } from '../lib/testing';
import { createIdempotencyTable } from '../lib/stores/postgres';
import { runClaimRace } from './concurrency/claim-race';
import { deferred, OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { DynaliteServer, startDynalite } from './support/dynalite';
import { createTestDatabase, TestDatabase } from './support/postgres-database';
import { requires } from './support/prerequisites';
import { RedisServerHandle, startRedisServer } from './support/redis-server';
import { createTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

/**
 * The claim is atomic across processes and connections: 8 processes each claim the same keys with
 * many connections at the same moment, with a long lease. Each process tallies its own answers;
 * summed, every key was ACQUIRED exactly once, and the token the store holds is the one that was
 * told ACQUIRED.
 */
const PROCESSES = 8;
const withRedis = requires('redis-server');
const withPostgres = requires('postgres');

/** The configs of one race: one per process, all claiming the same keys. */
const claimers = (shape: Omit<ClaimerConfig, 'name' | 'index'>): ClaimerConfig[] =>
  Array.from({ length: PROCESSES }, (_, n) => ({ ...shape, name: `p${n}`, index: n }));

/** What every race must show, whatever the store. */
function expectOneWinnerPerKey(race: Awaited<ReturnType<typeof runClaimRace>>, keys: number): void {
  const { total, answers, acquiredPerKey, winsPerProcess } = race;
  console.log(
    `Claim race: ${PROCESSES} processes x ${keys} keys x ${total / PROCESSES / keys} claimers = ${total} claims: ` +
      `ACQUIRED ${answers.ACQUIRED}, IN_PROGRESS ${answers.IN_PROGRESS}, COMPLETED ${answers.COMPLETED}; ` +
      `keys won per process ${winsPerProcess.join(' ')}; ${race.raceMs} ms from go to the last tally`,
  );
  expect(answers.ACQUIRED + answers.IN_PROGRESS + answers.COMPLETED).toBe(total);
  expect(acquiredPerKey.filter((count) => count !== 1)).toEqual([]);
  expect(answers).toEqual({ ACQUIRED: keys, IN_PROGRESS: total - keys, COMPLETED: 0 });
  // The winners are spread over the processes (a real race, not one process first).
  expect(winsPerProcess.filter((wins) => wins > 0).length).toBeGreaterThan(1);
}

withRedis.describe('claim race: 8 processes x 500 keys x 16 concurrent claimers per key on one Redis', () => {
  const KEYS = 500;
  let server: RedisServerHandle;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(() => server.stop());

  it('answers ACQUIRED exactly once per key, by the claimers own tallies', async () => {
    const keyPrefix = `race-${Date.now().toString(36)}`;
    const race = await runClaimRace(
      claimers({ redisUrl: server.url, keyPrefix, keys: KEYS, claimersPerKey: 16, leaseMs: 600_000 }),
    );
    expectOneWinnerPerKey(race, KEYS);
    // Redis holds exactly the token each key's winner was told ACQUIRED for.
    const redis = new Redis(server.url);
    try {
      const held = await redis.mget(...Array.from({ length: KEYS }, (_, key) => `${keyPrefix}:${key}`));
      expect(held).toEqual(race.winners);
    } finally {
      redis.disconnect();
    }
  }, 60_000);
});

// dynalite is one JavaScript process (the Jest worker's) serving every claimer, and each lost claim
// costs it a put and a read: the race is smaller than on Redis, and its time is dynalite's.
describe('claim race: 8 processes x 50 keys x 4 concurrent claimers per key on one DynamoDB table (dynalite)', () => {
  const KEYS = 50;
  let dynamo: DynaliteServer;
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(() => dynamo.stop());

  it('answers ACQUIRED exactly once per key, by the claimers own tallies', async () => {
    const tableName = await dynamo.createTable();
    const keyPrefix = `race-${Date.now().toString(36)}`;
    const race = await runClaimRace(
      claimers({
        dynamodb: { endpoint: dynamo.endpoint, tableName },
        keyPrefix,
        keys: KEYS,
        claimersPerKey: 4,
        leaseMs: 600_000,
      }),
    );
    expectOneWinnerPerKey(race, KEYS);
    // The table holds exactly the token each key's winner was told ACQUIRED for.
    const client = dynamo.client();
    try {
      const held = new Map<string, string | undefined>();
      for (let first = 0; first < KEYS; first += 100) {
        const keys = Array.from({ length: Math.min(100, KEYS - first) }, (_, n) => ({
          id: { S: `${keyPrefix}:${first + n}` },
        }));
        const { Responses } = await client.send(
          new BatchGetItemCommand({ RequestItems: { [tableName]: { Keys: keys, ConsistentRead: true } } }),
        );
        for (const item of Responses?.[tableName] ?? []) held.set(item.id.S!, item.token?.S);
      }
      expect(Array.from({ length: KEYS }, (_, key) => held.get(`${keyPrefix}:${key}`))).toEqual(race.winners);
    } finally {
      client.destroy();
    }
  }, 90_000);
});

// Every Postgres connection is a backend process of a server the other specs share: 32 claimers per key.
withPostgres.describe(
  'claim race: 8 processes x 500 keys x 4 concurrent claimers per key on one Postgres table',
  () => {
    const KEYS = 500;
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase('race');
      await createIdempotencyTable(db.pool({ max: 1 }), { table: 'race_keys' });
    });
    afterAll(() => db?.drop());

    it('answers ACQUIRED exactly once per key, by the claimers own tallies', async () => {
      const keyPrefix = `race-${Date.now().toString(36)}`;
      const race = await runClaimRace(
        claimers({
          postgres: { url: db.url, table: 'race_keys' },
          keyPrefix,
          keys: KEYS,
          claimersPerKey: 4,
          leaseMs: 600_000,
        }),
      );
      expectOneWinnerPerKey(race, KEYS);
      // Each row holds exactly the token its key's winner was told ACQUIRED for.
      const { rows } = await db
        .pool({ max: 1 })
        .query<{ key: string; token: string }>('SELECT key, token FROM race_keys WHERE NOT completed');
      const held = new Map(rows.map((row) => [row.key, row.token]));
      expect(Array.from({ length: KEYS }, (_, key) => held.get(`${keyPrefix}:${key}`) ?? null)).toEqual(
        race.winners,
      );
    }, 90_000);
  },
);

describe('claim race in one process: the in-memory store behind the Lambda host', () => {
  it('runs the handler once per event among 1,000 concurrent duplicates (50 events x 20 copies)', async () => {
    const app = await createTestApp({
      sqs: { concurrency: 1_000, recordLog: false },
      imports: [OrdersModule],
    });
    try {
      const ledger = app.get(OrdersLedger);
      const hold = deferred();
      const events = Array.from({ length: 50 }, (_, n) => orderCreated(`dup-${n}`));
      for (const event of events) ledger.script.set(event.orderId, hold.promise);
      // Copy c of event n at position c * 50 + n: every event's copies spread over the batch.
      const records = Array.from({ length: 1_000 }, (_, i) => buildSqsRecord(events[i % 50]));

      const first = app.sqs.sendRecords(records);
      // Every first copy is inside its handler, holding its claim, while the other 950 claim.
      await waitFor(() => ledger.calls === 50, 5_000, 'the 50 first copies in their handlers');
      hold.resolve();
      const { statuses } = await first;
      expect(statuses.filter((status) => status === 'OK')).toHaveLength(50);
      expect(statuses.filter((status) => status === 'IN_PROGRESS')).toHaveLength(950);

      // The 950 in-flight duplicates come back (SQS redelivers them): each is acked as a duplicate.
      const failed = records.filter((_, i) => statuses[i] === 'IN_PROGRESS');
      const again = await app.sqs.sendRecords(failed.map(SqsTestClient.redelivery));
      expect(new Set(again.statuses)).toEqual(new Set(['DUPLICATE']));
      expect(ledger.calls).toBe(50);
      expect(events.every((event) => ledger.count(event.orderId) === 1)).toBe(true);
    } finally {
      await app.close();
    }
  });
});
