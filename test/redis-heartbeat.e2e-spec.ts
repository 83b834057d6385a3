import { Test, TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { IdempotencyModule, SqsModule } from '../lib';
import { RedisIdempotencyStore } from '../lib/stores/redis';
import { SqsTestClient } from '../lib/testing';
import { OrdersLedger, OrdersModule, deferred, orderCreated } from './fixtures/orders.fixture';
import { CapturingLogger } from './support/capturing-logger';
import { requires } from './support/prerequisites';

const withRedis = requires('redis-server');

/**
 * The lease heartbeat, end to end on Redis: a handler that outlives `inProgressTtl` keeps its claim
 * while it runs (a duplicate meets IN_PROGRESS, not a second run), the heartbeat stops when the
 * handler settles, and a lost extension is logged.
 */
const LEASE = 600;

/** The Redis store, counting the extensions it was asked for. */
class CountingRedisStore extends RedisIdempotencyStore {
  extensions = 0;
  override extend(key: string, ttlMs: number, token: string): Promise<boolean> {
    this.extensions++;
    return super.extend(key, ttlMs, token);
  }
}

withRedis.describe('lease heartbeat on Redis', () => {
  let redis: Redis;
  let store: CountingRedisStore;
  let moduleRef: TestingModule;
  let logs: CapturingLogger;
  let keyPrefix: string;

  const start = async (heartbeat: boolean) => {
    keyPrefix = `heartbeat-${randomUUID()}`;
    store = new CountingRedisStore(redis);
    moduleRef = await Test.createTestingModule({
      imports: [
        IdempotencyModule.forRoot({ store, keyPrefix, service: 'orders', inProgressTtl: LEASE, heartbeat }),
        SqsModule.forRoot({}),
        OrdersModule,
      ],
    }).compile();
    logs = new CapturingLogger();
    moduleRef.useLogger(logs);
    await moduleRef.init();
    return new SqsTestClient(moduleRef);
  };
  const redisKey = (id: string) => `${keyPrefix}:orders:order_created:${id}`;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  beforeEach(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  afterEach(async () => {
    await moduleRef?.close();
    await redis.quit();
  });

  it('keeps a long handler’s claim alive past inProgressTtl, and stops at settle', async () => {
    const sqs = await start(true);
    const ledger = moduleRef.get(OrdersLedger);
    const slow = deferred();
    ledger.script.set('order-slow', slow.promise);

    const first = sqs.send(orderCreated('slow'));
    await sleep(LEASE * 2.5);
    // Without the heartbeat the lease would have expired twice over: the duplicate would run.
    expect((await sqs.send(orderCreated('slow'))).status).toBe('IN_PROGRESS');
    expect(await redis.pttl(redisKey('slow'))).toBeGreaterThan(0);
    expect(store.extensions).toBeGreaterThanOrEqual(3);

    slow.resolve();
    expect((await first).status).toBe('OK');
    expect(await redis.get(redisKey('slow'))).toBe('1');
    const atSettle = store.extensions;
    await sleep(LEASE * 1.5);
    expect(store.extensions).toBe(atSettle);
    expect(ledger.count('order-slow')).toBe(1);
    expect(logs.matching('warn', /Lost the claim/)).toEqual([]);
  });

  it('without the heartbeat, the same handler loses its claim and the duplicate runs (why it exists)', async () => {
    const sqs = await start(false);
    const ledger = moduleRef.get(OrdersLedger);
    const slow = deferred();
    ledger.script.set('order-slow', slow.promise);

    const first = sqs.send(orderCreated('slow'));
    await sleep(LEASE * 2.5);
    ledger.script.delete('order-slow');
    expect((await sqs.send(orderCreated('slow'))).status).toBe('OK');
    slow.resolve();
    expect((await first).status).toBe('OK');
    expect(ledger.count('order-slow')).toBe(2);
    expect(store.extensions).toBe(0);
    // The stale owner's completion was refused (fenced) and reported.
    expect(
      logs.matching('warn', /Lost the claim on ".*:slow" before OrdersHandler.onOrderCreated completed/),
    ).toHaveLength(1);
  });

  it('logs a lost extension, and leaves the new owner’s claim alone', async () => {
    const sqs = await start(true);
    const ledger = moduleRef.get(OrdersLedger);
    const slow = deferred();
    ledger.script.set('order-taken', slow.promise);

    const first = sqs.send(orderCreated('taken'));
    await sleep(LEASE / 2);
    // Another attempt owns the key now, as after a lease expiry during a GC pause or a partition.
    await redis.set(redisKey('taken'), 'another-attempt', 'PX', 30_000);
    await sleep(LEASE);
    expect(
      logs.matching('warn', /Lost the claim on ".*:taken" while .* runs: the lease could not be extended/),
    ).toHaveLength(1);
    const extensionsAfterLoss = store.extensions;
    await sleep(LEASE);
    expect(store.extensions).toBe(extensionsAfterLoss); // the heartbeat gave up on the lost claim

    slow.resolve();
    expect((await first).status).toBe('OK');
    expect(await redis.get(redisKey('taken'))).toBe('another-attempt');
    expect(logs.matching('warn', /Lost the claim on ".*:taken" before .* completed/)).toHaveLength(1);
  });
});
