import {
  IdempotencyStatsStore,
  IdempotencyStore,
  InMemoryIdempotencyStatsStore,
  InMemoryIdempotencyStore,
  RedisIdempotencyStatsStore,
} from '../../lib';
import * as library from '../../lib';

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
 * would have. The Redis store is developed on its own branch; until it is exported from `lib/`,
 * the demo says so and falls back to the in-memory store.
 */
export async function createDemoStores(
  redisUrl: string | undefined,
  runId: string,
  log: (line: string) => void,
): Promise<DemoStores> {
  if (redisUrl) {
    // Plug-in point for the Redis store (lib/stores/redis-idempotency.store.ts), looked up at run
    // time so this file compiles before it lands: `new RedisIdempotencyStore(redis)`.
    const RedisIdempotencyStore = (library as Record<string, unknown>).RedisIdempotencyStore as
      (new (redis: unknown) => IdempotencyStore) | undefined;
    if (RedisIdempotencyStore) {
      const { default: Redis } = await import('ioredis');
      const connections: Array<InstanceType<typeof Redis>> = [];
      const stores = new Map<number, IdempotencyStore>();
      const statsConnection = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
      connections.push(statsConnection);
      return {
        description: `Redis (${redactUrl(redisUrl)}), one connection per worker`,
        stats: new RedisIdempotencyStatsStore(statsConnection, `demo-${runId}:stats`),
        forWorker: (index) => {
          let store = stores.get(index);
          if (!store) {
            const redis = new Redis(redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 });
            connections.push(redis);
            store = new RedisIdempotencyStore(redis);
            stores.set(index, store);
          }
          return store;
        },
        close: async () => {
          await statsConnection.del(`demo-${runId}:stats`).catch(() => undefined);
          await Promise.all(connections.map((redis) => redis.quit().catch(() => redis.disconnect())));
        },
      };
    }
    log('REDIS_URL is set, but this build has no RedisIdempotencyStore yet: using the in-memory store.');
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
