import { IdempotencyStatsStore, InMemoryIdempotencyStatsStore } from '../../lib/center';
import { IdempotencyStore, InMemoryIdempotencyStore } from '../../lib';
import {
  RedisIdempotencyStatsStore,
  RedisIdempotencyStore,
  recommendedIoRedisOptions,
} from '../../lib/stores/redis';

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
 * would have. Each store owns its connection (made from the URL): it reports Redis going away and
 * coming back itself, and with `failFastOnStartup` a Redis that is not there stops the demo at
 * once with a sentence naming it, instead of a run in which every order fails.
 */
export async function createDemoStores(redisUrl: string | undefined, runId: string): Promise<DemoStores> {
  if (redisUrl) {
    const { Redis } = await import('ioredis');
    const statsConnection = new Redis(redisUrl, recommendedIoRedisOptions);
    // The stores say what is wrong with Redis; this connection's own errors would only repeat it.
    statsConnection.on('error', () => undefined);
    const stores = new Map<number, RedisIdempotencyStore>();
    return {
      description: `Redis (${redactUrl(redisUrl)}), one connection per worker`,
      stats: new RedisIdempotencyStatsStore(statsConnection, `demo-${runId}:stats`),
      forWorker: (index) => {
        let store = stores.get(index);
        if (!store) {
          store = new RedisIdempotencyStore(redisUrl, { failFastOnStartup: true, startupTimeoutMs: 3_000 });
          stores.set(index, store);
        }
        return store;
      },
      close: async () => {
        await statsConnection.del(`demo-${runId}:stats`).catch(() => undefined);
        await statsConnection.quit().catch(() => statsConnection.disconnect());
        await Promise.all([...stores.values()].map((store) => store.close()));
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
