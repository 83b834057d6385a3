import { Test, TestingModule } from '@nestjs/testing';
import { Cluster, Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { AcquireResult, IdempotencyModule, SqsModule } from '../lib';
import { RedisIdempotencyStore, recommendedIoRedisOptions } from '../lib/stores/redis';
import { SqsTestClient } from '../lib/testing';
import { describeIdempotencyStore } from '../lib/testing';
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

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  client = new Cluster(cluster.nodes, { redisOptions: recommendedIoRedisOptions });
}, 60_000);

afterAll(async () => {
  await client?.quit();
  await cluster?.stop();
});

describeIdempotencyStore(
  'RedisIdempotencyStore on a 3-master Redis Cluster',
  () => ({ store: new RedisIdempotencyStore(client) }),
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
