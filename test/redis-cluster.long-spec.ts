import { Test, TestingModule } from '@nestjs/testing';
import { Cluster, Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { AcquireResult } from '../lib/stores';
import { IdempotencyModule, SqsModule } from '../lib';
import { RedisIdempotencyStore, recommendedIoRedisOptions } from '../lib/stores/redis';
import { SqsTestClient } from '../lib/testing';
import { describeIdempotencyStore } from '../lib/testing';
import { clusterSlotOf } from '../lib/stores/redis/redis-cluster-slot';
import { OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { RedisClusterHandle, startRedisCluster } from './support/redis-cluster';
import { requires } from './support/prerequisites';

const withRedis = requires('redis-server');

/**
 * Every script touches one key, so the store runs unchanged on Redis Cluster: here on a local
 * 3-master cluster (no replicas) started for this file.
 */
let cluster: RedisClusterHandle;
let client: Cluster;
/** Auto-pipelining at the cluster's level: the store sends its batch scripts past the pipeline. */
let pipelining: Cluster;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  client = new Cluster(cluster.nodes, { redisOptions: recommendedIoRedisOptions });
  pipelining = new Cluster(cluster.nodes, {
    enableAutoPipelining: true,
    redisOptions: recommendedIoRedisOptions,
  });
}, 60_000);

afterAll(async () => {
  await client?.quit();
  await pipelining?.quit();
  await cluster?.stop();
});

describeIdempotencyStore(
  'RedisIdempotencyStore on a 3-master Redis Cluster',
  () => ({ store: new RedisIdempotencyStore(client) }),
  { runner: withRedis.runner },
);

describeIdempotencyStore(
  'RedisIdempotencyStore on a 3-master Redis Cluster with auto-pipelining',
  () => ({ store: new RedisIdempotencyStore(pipelining) }),
  { runner: withRedis.runner },
);

describeIdempotencyStore(
  'RedisIdempotencyStore on a 3-master Redis Cluster (compactKeys)',
  () => ({ store: new RedisIdempotencyStore(client, { compactKeys: true }) }),
  { runner: withRedis.runner },
);

withRedis.describe('RedisIdempotencyStore on Redis Cluster', () => {
  it('spreads keys over every master, each claimed and completed in one script on its own node', async () => {
    const store = new RedisIdempotencyStore(client);
    const keys = Array.from({ length: 60 }, (_, i) => `cluster-spread:${randomUUID()}:${i}`);
    const owners = keys.map(() => randomUUID());
    const answers = await Promise.all(keys.map((key, i) => store.tryAcquire(key, 30_000, owners[i])));
    expect(new Set(answers)).toEqual(new Set([AcquireResult.ACQUIRED]));
    const completed = await Promise.all(keys.map((key, i) => store.markComplete(key, 30_000, owners[i])));
    expect(completed.every(Boolean)).toBe(true);

    // Count the keys on each master directly: all three hold some of them.
    const perNode = await Promise.all(
      cluster.nodes.map(async ({ port }) => {
        const node = new Redis(port);
        try {
          const values = await Promise.all(keys.map((key) => node.get(key).catch(() => null)));
          return values.filter((value) => value === '1').length;
        } finally {
          node.disconnect();
        }
      }),
    );
    expect(perNode.every((count) => count > 0)).toBe(true);
    expect(perNode.reduce((sum, count) => sum + count, 0)).toBe(keys.length);
  });

  it('claims and completes a batch with one script call per hash slot, on the node that owns it', async () => {
    const store = new RedisIdempotencyStore(client);
    const run = randomUUID();
    // Ten keys in one slot (a hash tag), ten in another, ten spread over the cluster.
    const keys = [
      ...Array.from({ length: 10 }, (_, i) => `batch:{${run}-a}:${i}`),
      ...Array.from({ length: 10 }, (_, i) => `batch:{${run}-b}:${i}`),
      ...Array.from({ length: 10 }, (_, i) => `batch:${run}:${i}`),
    ];
    const slots = new Set(keys.map((key) => clusterSlotOf(key)));
    const nodes = cluster.nodes.map(({ port }) => new Redis(port));
    const evalshaCalls = async () => {
      const stats = await Promise.all(nodes.map((node) => node.info('commandstats')));
      return stats.reduce((sum, text) => sum + Number(/cmdstat_evalsha:calls=(\d+)/.exec(text)?.[1] ?? 0), 0);
    };
    try {
      // The slot the store computes is the one the cluster computes, for text and for compact (bytes) keys.
      for (const key of [...keys.slice(0, 12), 'foo', Buffer.from('68bb093360f80f34447677e0', 'hex')]) {
        expect(clusterSlotOf(key)).toBe(await nodes[0].cluster('KEYSLOT', key as string));
      }
      const tokens = keys.map(() => randomUUID());
      await store.tryAcquireMany([{ key: 'warm', ttlMs: 30_000, token: 'w' }]); // scripts loaded, slots known
      await store.markCompleteMany([{ key: 'warm', ttlMs: 30_000, token: 'w' }]);
      const before = await evalshaCalls();
      expect(
        await store.tryAcquireMany(keys.map((key, i) => ({ key, ttlMs: 30_000, token: tokens[i] }))),
      ).toEqual(Array(keys.length).fill(AcquireResult.ACQUIRED));
      expect(
        await store.markCompleteMany(keys.map((key, i) => ({ key, ttlMs: 30_000, token: tokens[i] }))),
      ).toEqual(Array(keys.length).fill(true));
      expect((await evalshaCalls()) - before).toBe(slots.size * 2);
      expect(
        await store.tryAcquireMany(keys.map((key) => ({ key, ttlMs: 30_000, token: randomUUID() }))),
      ).toEqual(Array(keys.length).fill(AcquireResult.COMPLETED));
    } finally {
      nodes.forEach((node) => node.disconnect());
    }
  });

  it('dedups a batch across two app instances that share the cluster', async () => {
    const keyPrefix = `cluster-app-${randomUUID()}`;
    const start = async () => {
      const moduleRef: TestingModule = await Test.createTestingModule({
        imports: [
          IdempotencyModule.forRoot({
            store: new RedisIdempotencyStore(client),
            keyPrefix,
            service: 'orders',
          }),
          SqsModule.forRoot({}),
          OrdersModule,
        ],
      }).compile();
      moduleRef.useLogger(false);
      await moduleRef.init();
      return moduleRef;
    };
    const [first, second] = [await start(), await start()];
    try {
      const events = Array.from({ length: 10 }, (_, i) => orderCreated(`e${i}`));
      const one = await new SqsTestClient(first).sendBatch(events);
      const two = await new SqsTestClient(second).sendBatch(events);
      expect(one.statuses).toEqual(Array(10).fill('OK'));
      expect(two.statuses).toEqual(Array(10).fill('DUPLICATE'));
      expect(first.get(OrdersLedger).calls + second.get(OrdersLedger).calls).toBe(10);
    } finally {
      await first.close();
      await second.close();
    }
  });
});
