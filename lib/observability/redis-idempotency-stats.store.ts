import {
  ACTIVITY_RETENTION_MS,
  ActivityReport,
  checkRecentLimit,
  FleetActivity,
  fleetActivityOf,
  InstanceHeartbeat,
  MAX_INSTANCES_READ,
  minuteIncrementsOf,
} from './fleet-activity';
import type { IdempotencyStatsStore } from './idempotency-stats-store.interface';
import { needsAttention } from '../idempotency/record-outcome';
import type { RecentRecord } from './record-journal';
import { ClientEvents, listenToClient } from '../stores/shared-client-listeners';
import { readOptions } from '../common/known-options';

/** What the stats store calls on an ioredis `Redis` or `Cluster`, structurally. */
export interface RedisHashClient {
  pipeline(): RedisStatsPipeline;
  hgetall(key: string): Promise<Record<string, string>>;
}

/** The commands the stats store queues on a pipeline (an ioredis `Pipeline` has them all). */
export interface RedisStatsPipeline {
  hincrby(key: string, field: string, increment: number): unknown;
  exec(): Promise<Array<[Error | null, unknown]> | null>;
  xadd(key: string, ...args: Array<string | number>): unknown;
  xrevrange(key: string, end: string, start: string, count: 'COUNT', limit: number): unknown;
  hgetall(key: string): unknown;
  pexpire(key: string, milliseconds: number): unknown;
  set(key: string, value: string, px: 'PX', milliseconds: number): unknown;
  get(key: string): unknown;
  zadd(key: string, score: number, member: string): unknown;
  zremrangebyscore(key: string, min: number | string, max: number | string): unknown;
  zrevrangebyscore(
    key: string,
    max: number | string,
    min: number | string,
    limit: 'LIMIT',
    offset: number,
    count: number,
  ): unknown;
}

/** Options of {@link RedisIdempotencyStatsStore}. */
export interface RedisIdempotencyStatsStoreOptions {
  /** Recent failures the fleet keeps, and as many duplicates and skips (capped streams): 1 to 10,000. Default 1,000. */
  recentLimit?: number;
}

/**
 * Fleet counters in one Redis hash and the Center's activity beside it (capped streams of recent
 * records, a hash per minute, the instances' heartbeats), all in `<key>`'s hash slot, written by
 * each instance's background flush in one pipeline.
 *
 * @example
 * ```ts
 * IdempotencyModule.forRoot({ store, stats: { store: new RedisIdempotencyStatsStore(redis) } })
 * ```
 */
export class RedisIdempotencyStatsStore implements IdempotencyStatsStore {
  private readonly recentLimit: number;
  private readonly base: string;

  constructor(
    private readonly redis: RedisHashClient,
    private readonly key = 'idempotency:stats',
    given: RedisIdempotencyStatsStoreOptions = {},
  ) {
    const options = readOptions(given, { recentLimit: 'number' }, 'RedisIdempotencyStatsStore options');
    this.recentLimit = checkRecentLimit(options.recentLimit, 'RedisIdempotencyStatsStore options');
    this.base = HASH_TAG.test(key) ? key : `{${key}}`;
    // Without an `error` listener ioredis prints a stack on every reconnection attempt; a failed
    // flush is logged by the counters ("Could not share counters ..."), once per interval.
    listenToClient(redis as unknown as ClientEvents, { error: () => undefined });
  }

  async add(increments: ReadonlyMap<string, number>): Promise<void> {
    if (increments.size === 0) return;
    const pipeline = this.redis.pipeline();
    for (const [field, delta] of increments) pipeline.hincrby(this.key, field, delta);
    await run(pipeline);
  }

  async read(): Promise<Record<string, number>> {
    const raw = await this.redis.hgetall(this.key);
    return Object.fromEntries(Object.entries(raw).map(([field, value]) => [field, Number(value)]));
  }

  /** One pipelined round trip: the new records, the minutes' increments, the heartbeat. */
  async report(report: ActivityReport): Promise<void> {
    const pipeline = this.redis.pipeline();
    for (const record of report.records) {
      const stream = this.keyOf(needsAttention(record.status) ? 'recent:failures' : 'recent:repeats');
      pipeline.xadd(stream, 'MAXLEN', '~', this.recentLimit, '*', 'r', JSON.stringify(record));
    }
    const touched = new Set<number>();
    for (const [minute, field, count] of minuteIncrementsOf(report)) {
      pipeline.hincrby(this.keyOf(`m:${minute}`), field, count);
      touched.add(minute);
    }
    for (const minute of touched) pipeline.pexpire(this.keyOf(`m:${minute}`), ACTIVITY_RETENTION_MS);
    const seenAt = Date.parse(report.instance.seenAt);
    pipeline.set(
      this.keyOf(`instance:${report.instance.id}`),
      JSON.stringify(report.instance),
      'PX',
      ACTIVITY_RETENTION_MS,
    );
    pipeline.zadd(this.keyOf('instances'), seenAt, report.instance.id);
    pipeline.zremrangebyscore(this.keyOf('instances'), '-inf', seenAt - ACTIVITY_RETENTION_MS);
    await run(pipeline);
  }

  /** Two round trips: the records, the hour's minutes and the instance ids; then the heartbeats. */
  async readActivity(recordsPerKind = this.recentLimit): Promise<FleetActivity> {
    const now = Date.now();
    const newestMinute = Math.floor(now / 60_000);
    const minutes = Array.from({ length: 61 }, (_, i) => newestMinute - 60 + i);
    const pipeline = this.redis.pipeline();
    const count = Math.min(recordsPerKind, this.recentLimit);
    pipeline.xrevrange(this.keyOf('recent:failures'), '+', '-', 'COUNT', count);
    pipeline.xrevrange(this.keyOf('recent:repeats'), '+', '-', 'COUNT', count);
    for (const minute of minutes) pipeline.hgetall(this.keyOf(`m:${minute}`));
    const since = now - ACTIVITY_RETENTION_MS;
    pipeline.zrevrangebyscore(this.keyOf('instances'), '+inf', since, 'LIMIT', 0, MAX_INSTANCES_READ);
    const [failures, repeats, ...rest] = await run(pipeline);
    const ids = rest.pop() as string[];

    const entries = [...(failures as StreamEntry[]), ...(repeats as StreamEntry[])];
    const records = parseEach<RecentRecord>(
      entries.map(([, fields]) => fields[fields.indexOf('r') + 1]),
      'at',
    );
    let instances: InstanceHeartbeat[] = [];
    if (ids.length > 0) {
      const heartbeats = this.redis.pipeline();
      for (const id of ids) heartbeats.get(this.keyOf(`instance:${id}`));
      instances = parseEach<InstanceHeartbeat>(await run(heartbeats), 'seenAt');
    }
    return fleetActivityOf(
      instances,
      records,
      rest.map((fields, i) => [minutes[i], Object.entries((fields ?? {}) as Record<string, string>)]),
    );
  }

  /** `<base>:recent:failures|repeats` (streams), `<base>:m:<minute>`, `<base>:instances`, `<base>:instance:<id>`. */
  private keyOf(suffix: string): string {
    return `${this.base}:${suffix}`;
  }
}

/** An `XREVRANGE` reply's entry: its id and its field-value list. */
type StreamEntry = [string, string[]];

/** Runs a pipeline; rejects with the first command's error, else resolves each command's reply. */
async function run(pipeline: RedisStatsPipeline): Promise<unknown[]> {
  const results = (await pipeline.exec()) ?? [];
  const failed = results.find(([error]) => error);
  if (failed) throw failed[0];
  return results.map(([, value]) => value);
}

/** Redis Cluster's rule: the first `{` and the next `}`, with at least one character between, pick the hash slot. */
const HASH_TAG = /^[^{]*\{[^}]+\}/;

/**
 * The JSON objects among `texts` that carry the time they are sorted by (`at` or `seenAt`); a missing,
 * corrupt or foreign one (another version's, `null`) is skipped rather than failing the Center.
 */
function parseEach<T>(texts: readonly unknown[], time: 'at' | 'seenAt'): T[] {
  const values: T[] = [];
  for (const text of texts) {
    try {
      const value: unknown = typeof text === 'string' ? JSON.parse(text) : undefined;
      if (typeof (value as Record<string, unknown> | null)?.[time] === 'string') values.push(value as T);
    } catch {
      // skipped
    }
  }
  return values;
}
