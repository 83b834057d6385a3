import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { ClaimerConfig, ClaimerMessage, ClaimerTally } from './concurrency/claimer.protocol';
import { buildSqsRecord, SqsTestClient } from '../lib';
import { deferred, OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { forkTs } from './support/fork-ts';
import { requires } from './support/prerequisites';
import { RedisServerHandle, startRedisServer } from './support/redis-server';
import { createTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

/**
 * The claim is atomic across processes and connections: 8 processes × 16 connections each claim
 * the same 500 keys at the same moment (128 concurrent claimers per key, 64,000 claims) against one
 * Redis with a long lease. Each process tallies its own answers; summed, every key was ACQUIRED
 * exactly once, and the token Redis holds is the one that was told ACQUIRED.
 */
const PROCESSES = 8;
const KEYS = 500;
const CLAIMERS_PER_KEY = 16;
const withRedis = requires('redis-server');

withRedis.describe('claim race: 8 processes x 500 keys x 16 concurrent claimers per key on one Redis', () => {
  let server: RedisServerHandle;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(() => server.stop());

  it('answers ACQUIRED exactly once per key, by the claimers own tallies', async () => {
    const keyPrefix = `race-${Date.now().toString(36)}`;
    const children = Array.from({ length: PROCESSES }, (_, n) => {
      const config: ClaimerConfig = {
        name: `p${n}`,
        index: n,
        redisUrl: server.url,
        keyPrefix,
        keys: KEYS,
        claimersPerKey: CLAIMERS_PER_KEY,
        leaseMs: 600_000,
      };
      const child = forkTs(join(__dirname, 'concurrency', 'claimer.main.ts'), {
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
      // Every process starts claiming at the same moment.
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
        for (const answer of Object.keys(answers) as Array<keyof typeof answers>) {
          answers[answer] += tally.answers[answer];
        }
      }
      const total = PROCESSES * KEYS * CLAIMERS_PER_KEY;
      const winsPerProcess = tallies.map((tally) => tally.acquired.reduce((sum, count) => sum + count, 0));
      console.log(
        `Claim race: ${PROCESSES} processes x ${KEYS} keys x ${CLAIMERS_PER_KEY} claimers = ${total} claims: ` +
          `ACQUIRED ${answers.ACQUIRED}, IN_PROGRESS ${answers.IN_PROGRESS}, COMPLETED ${answers.COMPLETED}; ` +
          `keys won per process ${winsPerProcess.join(' ')}`,
      );
      expect(answers.ACQUIRED + answers.IN_PROGRESS + answers.COMPLETED).toBe(total);
      expect(acquiredPerKey.filter((count) => count !== 1)).toEqual([]);
      expect(answers).toEqual({ ACQUIRED: KEYS, IN_PROGRESS: total - KEYS, COMPLETED: 0 });
      // The winners are spread over the processes (a real race, not one process first)...
      expect(winsPerProcess.filter((wins) => wins > 0).length).toBeGreaterThan(1);
      // ...and Redis holds exactly the token each key's winner was told ACQUIRED for.
      const redis = new Redis(server.url);
      try {
        const held = await redis.mget(...Array.from({ length: KEYS }, (_, key) => `${keyPrefix}:${key}`));
        expect(held).toEqual(winners);
      } finally {
        redis.disconnect();
      }
    } finally {
      for (const { child } of children) if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 60_000);
});

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
