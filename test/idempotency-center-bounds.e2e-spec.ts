import Redis from 'ioredis';
import {
  CenterOverview,
  CenterRecords,
  IdempotencyStats,
  InMemoryIdempotencyStatsStore,
} from '../lib/center';
import { IdempotencyConfigurationError } from '../lib';
import { RedisIdempotencyStatsStore } from '../lib/stores/redis';
import type { InstanceHeartbeat } from '../lib/observability/fleet-activity';
import { orderCreated } from './fixtures/orders.fixture';
import { serveCenterApp } from './support/center-app';
import { requires } from './support/prerequisites';
import { createTestApp } from './support/test-app';

const withRedis = requires('redis-server');

/**
 * Every list the Center reads per request is bounded (#48: a `recentLimit` of 100,000 took each overview
 * 1 to 1.8 s and 280 MB): the bounds are checked at start-up, naming the option, its bounds and the value,
 * and the overview reads no more records than it can show.
 */

/** The error `start` throws (or `undefined`). */
function errorOf(start: () => unknown): unknown {
  try {
    start();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('the bounds of what the Center reads, checked at start-up', () => {
  it('a stats store keeps 1 to 10,000 recent records of each kind', () => {
    const redis = { pipeline: () => ({}), hgetall: async () => ({}) } as never;
    for (const recentLimit of [100_000, 0, 1.5, Number.NaN]) {
      for (const [start, where] of [
        [
          () => new RedisIdempotencyStatsStore(redis, 'k', { recentLimit }),
          'RedisIdempotencyStatsStore options',
        ],
        [() => new InMemoryIdempotencyStatsStore(recentLimit), 'InMemoryIdempotencyStatsStore'],
      ] as const) {
        const error = errorOf(start);
        expect(error).toBeInstanceOf(IdempotencyConfigurationError);
        expect(error).toMatchObject({
          code: 'IDEMPOTENCY_CONFIGURATION',
          message:
            `${where}: recentLimit must be an integer from 1 to 10,000 (the recent records of each kind kept, ` +
            `which the Center reads per request), got ${String(recentLimit)}.`,
        });
      }
    }
    expect(() => new RedisIdempotencyStatsStore(redis, 'k', { recentLimit: 10_000 })).not.toThrow();
    expect(() => new InMemoryIdempotencyStatsStore(1)).not.toThrow();
  });

  it('the journal keeps 0 to 10,000 recent records of each kind per event type', async () => {
    const starting = createTestApp({ idempotency: { stats: { activity: { recentPerType: 10_001 } } } });
    await expect(starting).rejects.toThrow(IdempotencyConfigurationError);
    await expect(
      createTestApp({ idempotency: { stats: { activity: { recentPerType: 10_001 } } } }),
    ).rejects.toMatchObject({
      code: 'IDEMPOTENCY_CONFIGURATION',
      message:
        'IdempotencyModule options: stats.activity.recentPerType must be an integer from 0 to 10,000 (the recent ' +
        'records of each kind kept per event type, which the Center reads per request), got 10001.',
    });
  });
});

/** A shared stats store that notes how many records of each kind the Center asked for, and got. */
class WatchedStatsStore extends InMemoryIdempotencyStatsStore {
  readonly reads: Array<{ asked: number | undefined; got: number }> = [];

  override async readActivity(recordsPerKind?: number) {
    const activity = await super.readActivity(recordsPerKind);
    this.reads.push({ asked: recordsPerKind, got: activity.records.length });
    return activity;
  }
}

describe('the overview reads no more records than it shows', () => {
  it('of a fleet: 20 of each kind per event type, whatever the stats store keeps; /records reads them all', async () => {
    const shared = new WatchedStatsStore(10_000);
    const served = await serveCenterApp({
      idempotency: { stats: { store: shared, flushIntervalMs: 60_000, activity: { recentPerType: 500 } } },
    });
    try {
      for (let i = 0; i < 120; i++) {
        served.ledger.script.set(`order-f${i}`, 'fail');
        await served.sqs.send(orderCreated(`f${i}`));
      }
      const get = async <T>(path: string): Promise<T> =>
        (await fetch(`${served.base}${path}`, { headers: { 'x-admin': 'yes' } })).json() as Promise<T>;
      const overview = await get<CenterOverview>('/idempotency/api/v1/overview');
      // Two event types (order_created, order_cancelled) and the unrouted: 20 failures each at most.
      expect(shared.reads.at(-1)).toEqual({ asked: 60, got: 60 });
      const shown = overview.eventTypes.find((type) => type.eventType === 'order_created')!.recent;
      // The newest (records of one millisecond have no order among them).
      expect(shown).toHaveLength(20);
      expect(shown.every((record) => Number(record.key!.slice(1)) >= 60)).toBe(true);
      const records = await get<CenterRecords>('/idempotency/api/v1/records?limit=1000');
      expect(records.records).toHaveLength(120);
      expect(shared.reads.at(-1)).toEqual({ asked: undefined, got: 120 });
    } finally {
      await served.close();
    }
  });

  it("of this instance: the journal's newest of each kind", async () => {
    const served = await serveCenterApp({ idempotency: { stats: { activity: { recentPerType: 500 } } } });
    try {
      for (let i = 0; i < 30; i++) {
        served.ledger.script.set(`order-f${i}`, 'fail');
        await served.sqs.send(orderCreated(`f${i}`));
        await served.sqs.send(orderCreated(`d${i % 3}`)); // a success, then duplicates
      }
      const activity = await served.app.get(IdempotencyStats).activity('instance', 5);
      expect(activity.records.map((record) => `${record.status} ${record.key}`)).toEqual([
        'DUPLICATE d2',
        'FAILED f29',
        'DUPLICATE d1',
        'FAILED f28',
        'DUPLICATE d0',
        'FAILED f27',
        'DUPLICATE d2',
        'FAILED f26',
        'DUPLICATE d1',
        'FAILED f25',
      ]);
      expect((await served.app.get(IdempotencyStats).activity('instance')).records).toHaveLength(57);
    } finally {
      await served.close();
    }
  });
});

describe('the instances the Center reads: the 1,000 most recently seen', () => {
  const heartbeat = (i: number): InstanceHeartbeat =>
    ({
      id: `host/${i}/x`,
      host: 'host',
      pid: i,
      startedAt: new Date(0).toISOString(),
      seenAt: new Date(Date.now() - 60_000 + i).toISOString(),
      counters: {},
      claims: {},
      unrouted: [],
    }) as unknown as InstanceHeartbeat;

  it('in memory', async () => {
    const store = new InMemoryIdempotencyStatsStore();
    for (let i = 0; i < 1_005; i++)
      await store.report({ instance: heartbeat(i), records: [], trends: [], claims: [] });
    const { instances } = await store.readActivity();
    expect(instances).toHaveLength(1_000);
    expect(instances[0].pid).toBe(1_004);
    expect(instances.at(-1)!.pid).toBe(5);
  });

  withRedis.it('in Redis, read no further', async () => {
    const redis = new Redis(process.env.REDIS_URL!);
    const key = `center-bounds:${Date.now()}:${Math.random()}`;
    try {
      const store = new RedisIdempotencyStatsStore(redis, key);
      for (let i = 0; i < 1_005; i++)
        await store.report({ instance: heartbeat(i), records: [], trends: [], claims: [] });
      expect(await redis.zcard(`{${key}}:instances`)).toBe(1_005);
      const { instances } = await store.readActivity();
      expect(instances).toHaveLength(1_000);
      expect(instances[0].pid).toBe(1_004);
      expect(instances.at(-1)!.pid).toBe(5);
    } finally {
      const keys = await redis.keys(`*${key}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });
});
