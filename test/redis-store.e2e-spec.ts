import { Test, TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { IdempotencyModule, IdempotencyStore, SqsModule } from '../lib';
import { RedisIdempotencyStore } from '../lib/stores/redis';
import { SqsTestClient } from '../lib/testing';
import { OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { requires } from './support/prerequisites';
import { expectInstancesShareClaims } from './support/shared-claims';

const withRedis = requires('redis-server');

/**
 * The reason to use Redis: instances share dedup state. Two Nest apps (two "instances" of one
 * service) each own a connection made from a URL; a message handled by one is a duplicate for the
 * other, a message in flight on one is IN_PROGRESS on the other, and closing an app closes its
 * connection.
 */
withRedis.describe('RedisIdempotencyStore in a Nest app', () => {
  const url = process.env.REDIS_URL!;
  let keyPrefix: string;
  const apps: TestingModule[] = [];

  const start = async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        IdempotencyModule.forRootAsync({
          useFactory: () => ({ store: new RedisIdempotencyStore(url), keyPrefix, service: 'orders' }),
        }),
        SqsModule.forRoot({}),
        OrdersModule,
      ],
    }).compile();
    moduleRef.useLogger(false);
    await moduleRef.init();
    apps.push(moduleRef);
    return { moduleRef, sqs: new SqsTestClient(moduleRef), ledger: moduleRef.get(OrdersLedger) };
  };

  beforeEach(() => {
    keyPrefix = `app-${randomUUID()}`;
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  it('shares dedup state between two instances', async () => {
    const [a, b] = [await start(), await start()];
    await expectInstancesShareClaims(a, b);
  });

  it('keeps the keys as the module builds them, completed as "1" for ttl', async () => {
    const { sqs } = await start();
    await sqs.send(orderCreated('e1'));
    const redis = new Redis(url);
    try {
      const key = `${keyPrefix}:orders:order_created:e1`;
      expect(await redis.get(key)).toBe('1');
      expect(await redis.pttl(key)).toBeGreaterThan(86_000_000); // the default ttl, 24 h
    } finally {
      await redis.quit();
    }
  });

  it('closes the connection it created when the app closes', async () => {
    const { moduleRef, sqs } = await start();
    await sqs.send(orderCreated('e1'));
    const store = moduleRef.get<RedisIdempotencyStore>(IdempotencyStore);
    expect(store).toBeInstanceOf(RedisIdempotencyStore);
    const client = store.client;
    expect(client?.status).toBe('ready');
    await moduleRef.close();
    apps.splice(apps.indexOf(moduleRef), 1);
    expect(client?.status).toBe('end');
    expect(store.client).toBeUndefined(); // closed for good: no client to send through
  });
});
