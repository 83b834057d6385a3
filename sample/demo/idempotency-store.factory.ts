import {
  IdempotencyStatsStore,
  IdempotencyStore,
  InMemoryIdempotencyStatsStore,
  InMemoryIdempotencyStore,
  RedisIdempotencyStatsStore,
  RedisIdempotencyStore,
  recommendedIoRedisOptions,
} from '../../lib';

/** The idempotency store(s) of a demo run. */
export interface DemoStores {
  /** What the report calls it. */
  description: string;
  /** The store of worker `index` (the same instance for all, unless each has its own connection). */
  forWorker(index: number): IdempotencyStore;
  /** The counters every instance shares, so the Idempotency Center shows the whole run. */
  stats: IdempotencyStatsStore;
  close(): Promise<void>;
}

/**
 * THE place where the demo picks its idempotency store.
 *
 * Without `REDIS_URL`: one in-memory store, shared by the workers (they run in this process; a
 * shared store is what makes dedup work across instances).
 *
 * With `REDIS_URL`: `RedisIdempotencyStore`, one connection per worker, as separate instances
 * would have.
 */
export async function createDemoStores(redisUrl: string | undefined, runId: string): Promise<DemoStores> {
  if (redisUrl) {
    // One connection per worker, as separate instances would have.
    const { Redis } = await import('ioredis');
    const connections: Array<InstanceType<typeof Redis>> = [];
    const stores = new Map<number, IdempotencyStore>();
    const connect = () => {
      const redis = new Redis(redisUrl, recommendedIoRedisOptions);
      connections.push(redis);
      return redis;
    };
    const statsConnection = connect();
    return {
      description: `Redis (${redactUrl(redisUrl)}), one connection per worker`,
      stats: new RedisIdempotencyStatsStore(statsConnection, `demo-${runId}:stats`),
      forWorker: (index) => {
        let store = stores.get(index);
        if (!store) stores.set(index, (store = new RedisIdempotencyStore(connect())));
        return store;
      },
      close: async () => {
        await statsConnection.del(`demo-${runId}:stats`).catch(() => undefined);
        await Promise.all(connections.map((redis) => redis.quit().catch(() => redis.disconnect())));
      },
    };
  }
  const shared = new InMemoryIdempotencyStore();
  return {
    description: 'in-memory, shared by the workers of this process',
    forWorker: () => shared,
    stats: new InMemoryIdempotencyStatsStore(),
    close: async () => undefined,
  };
}

function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
