import type { IdempotencyStatsStore } from './idempotency-stats-store.interface';

/** What the stats store calls on an ioredis `Redis` or `Cluster` (declared structurally: ioredis is an optional peer). */
export interface RedisHashClient {
  pipeline(): {
    hincrby(key: string, field: string, increment: number): unknown;
    exec(): Promise<Array<[Error | null, unknown]> | null>;
  };
  hgetall(key: string): Promise<Record<string, string>>;
}

/**
 * Fleet-wide counters in one Redis hash: a flush is one pipelined round trip of `HINCRBY`s, a read
 * one `HGETALL`. The hash is a single key, so it also works on Redis Cluster.
 *
 * @example
 * ```ts
 * IdempotencyModule.forRoot({ store, stats: { store: new RedisIdempotencyStatsStore(redis) } })
 * ```
 */
export class RedisIdempotencyStatsStore implements IdempotencyStatsStore {
  constructor(
    private readonly redis: RedisHashClient,
    private readonly key = 'idempotency:stats',
  ) {}

  async add(increments: ReadonlyMap<string, number>): Promise<void> {
    if (increments.size === 0) return;
    const pipeline = this.redis.pipeline();
    for (const [field, delta] of increments) pipeline.hincrby(this.key, field, delta);
    const results = await pipeline.exec();
    const failed = results?.find(([error]) => error);
    if (failed) throw failed[0];
  }

  async read(): Promise<Record<string, number>> {
    const raw = await this.redis.hgetall(this.key);
    const totals: Record<string, number> = {};
    for (const [field, value] of Object.entries(raw)) totals[field] = Number(value);
    return totals;
  }
}
