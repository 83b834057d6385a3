import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RecentRecord } from '../lib/center';
import { RedisIdempotencyStatsStore } from '../lib/stores/redis';
import type { ActivityReport, InstanceHeartbeat } from '../lib/observability/fleet-activity';
import { emptyCounters } from '../lib/idempotency/idempotency-counters';
import { RECORD_STATUSES } from '../lib/idempotency/record-outcome';
import { flushBenchDb } from './bench-redis';

/**
 * Redis memory of the Idempotency Center's shared activity (`RedisIdempotencyStatsStore`), filled
 * to its bounds: the two capped streams of recent records (1,000 failures, 1,000 duplicates and
 * skips, each a typical record of the demo: a UUID message id, an event id key, a reason), an hour
 * of per-minute hashes for one event type (six statuses and a spread of latency buckets per
 * minute), and one instance's heartbeat. `MEMORY USAGE` of each key (exact: `SAMPLES 0`).
 */
export interface ActivityMemory {
  recentLimit: number;
  /** Both streams, in bytes, and per record. */
  streams: number;
  bytesPerRecord: number;
  exampleRecordJson: string;
  /** The hour of per-minute hashes of one event type, in bytes. */
  minutes: number;
  /** One instance's heartbeat and its sorted-set entry, in bytes. */
  instance: number;
}

export async function activityMemory(redis: Redis, recentLimit = 1_000): Promise<ActivityMemory> {
  await flushBenchDb(redis);
  const key = 'idempotency:stats';
  const store = new RedisIdempotencyStatsStore(redis, key, { recentLimit });
  const now = Date.now();
  const record = (status: RecentRecord['status'], i: number): RecentRecord => ({
    at: new Date(now).toISOString(),
    status,
    eventType: 'order_created',
    routed: true,
    key: `evt-${randomUUID()}`,
    messageId: randomUUID(),
    queue: 'orders',
    receiveCount: 2,
    durationMs: 12.3,
    ...(status === 'FAILED' ? { reason: `warehouse busy, order order-${i} not shipped` } : {}),
    instance: `ip-10-0-1-17/4242/${randomUUID().slice(0, 8)}`,
  });
  const instance: InstanceHeartbeat = {
    id: `ip-10-0-1-17/4242/8f3a21c0`,
    host: 'ip-10-0-1-17',
    pid: 4242,
    service: 'orders',
    startedAt: new Date(now - 3_600_000).toISOString(),
    seenAt: new Date(now).toISOString(),
    counters: { ...emptyCounters(), handled: 123_456, duplicates_completed: 2_345, failed: 12 },
    claims: { windowMinutes: 5, claims: 30_000, timed: 2_100, errors: 0, p50Ms: 0.42, p99Ms: 2.83 },
    unrouted: [],
  };
  const newest = Math.floor(now / 60_000);
  // Records in batches, as flushes deliver them; more than the cap, so the streams are trimmed.
  for (let batch = 0; batch < 25; batch++) {
    const report: ActivityReport = {
      instance,
      records: Array.from({ length: 100 }, (_, i) =>
        record(i % 2 === 0 ? 'FAILED' : 'DUPLICATE', batch * 100 + i),
      ),
      trends: [],
      claims: [],
    };
    await store.report(report);
  }
  for (let minute = newest - 59; minute <= newest; minute++) {
    await store.report({
      instance,
      records: [],
      trends: RECORD_STATUSES.map((status) => ({ minute, eventType: 'order_created', status, count: 1_000 })),
      claims: Array.from({ length: 20 }, (_, i) => ({ minute, index: 30 + i, count: 50 })),
    });
  }
  const usage = async (name: string) =>
    Number((await redis.call('MEMORY', 'USAGE', name, 'SAMPLES', '0')) ?? 0);
  const base = `{${key}}`;
  const streams = (await usage(`${base}:recent:failures`)) + (await usage(`${base}:recent:repeats`));
  const entries =
    (await redis.xlen(`${base}:recent:failures`)) + (await redis.xlen(`${base}:recent:repeats`));
  let minutes = 0;
  for (let minute = newest - 59; minute <= newest; minute++) minutes += await usage(`${base}:m:${minute}`);
  const instanceBytes = (await usage(`${base}:instance:${instance.id}`)) + (await usage(`${base}:instances`));
  const result: ActivityMemory = {
    recentLimit,
    streams,
    bytesPerRecord: streams / entries,
    exampleRecordJson: JSON.stringify(record('FAILED', 7)),
    minutes,
    instance: instanceBytes,
  };
  await flushBenchDb(redis);
  return result;
}
