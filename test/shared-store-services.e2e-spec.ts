import { Injectable, Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  createSqsLambdaHandler,
  Idempotent,
  IdempotencyConfigurationError,
  IdempotencyModule,
  IdempotencyModuleOptions,
  SqsMessageHandler,
  SqsModule,
} from '../lib';
import { IdempotencyStats } from '../lib/center';
import { buildSqsRecord, SqsTestClient } from '../lib/testing';
import { RedisIdempotencyStore } from '../lib/stores/redis';
import { OrderCreated, orderCreated } from './fixtures/orders.fixture';
import { CapturingLogger } from './support/capturing-logger';
import { RedisServerHandle, startRedisServer } from './support/redis-server';
import { fauxqsClientConfig, waitFor } from './support/sqs-queues';
import { usePollingHarness } from './support/polling-harness';

/**
 * Several services on one Redis, as real teams deploy: `billing` and `shipping` each subscribe their
 * own queue to the same topic, so every event reaches both, and both keep their claims in one Redis.
 * With keys `<prefix>:<event type>:<id>` the second service acked every event as a duplicate of the
 * first one's and never ran it; the service identity in every key keeps them apart.
 */

/** What one app's handler did: event ids, in order, once per run of the handler. */
@Injectable()
class Applied {
  readonly ids: string[] = [];
}

@Injectable()
class OrderHandler {
  constructor(private readonly applied: Applied) {}

  @SqsMessageHandler(OrderCreated)
  @Idempotent()
  async onOrderCreated(event: OrderCreated): Promise<void> {
    this.applied.ids.push(event.id);
  }
}

@Module({ providers: [OrderHandler, Applied], exports: [Applied] })
class OrderHandlerModule {}

const SERVICE_VARIABLES = ['AWS_LAMBDA_FUNCTION_NAME', 'OTEL_SERVICE_NAME'] as const;

describe('two services on one Redis', () => {
  let server: RedisServerHandle;
  let redis: Redis;
  const polling = usePollingHarness({ captureLogs: false });
  const { queues } = polling;
  const saved = new Map<string, string | undefined>();
  let keyPrefix: string;

  const startApp = async (idempotency: IdempotencyModuleOptions, queueUrl?: string) => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        IdempotencyModule.forRoot({
          store: new RedisIdempotencyStore(server.url),
          keyPrefix,
          stats: {},
          ...idempotency,
        }),
        SqsModule.forRoot({
          queues: queueUrl ? [{ name: 'orders', url: queueUrl }] : [],
          client: fauxqsClientConfig(),
          waitTimeSeconds: 1,
        }),
        OrderHandlerModule,
      ],
    }).compile();
    moduleRef.useLogger(new CapturingLogger());
    await polling.start(moduleRef);
    await moduleRef.init();
    return { moduleRef, applied: moduleRef.get(Applied), sqs: new SqsTestClient(moduleRef) };
  };

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
  });
  beforeEach(() => {
    keyPrefix = `idem-${Date.now().toString(36)}`;
    for (const name of SERVICE_VARIABLES) {
      saved.set(name, process.env[name]);
      delete process.env[name];
    }
  });
  afterEach(() => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  it('billing and shipping each run their handler once per event of a fan-out', async () => {
    const [billingQueue, shippingQueue] = await Promise.all([
      queues.create('billing'),
      queues.create('shipping'),
    ]);
    const billing = await startApp({ service: 'billing' }, billingQueue.url);
    const shipping = await startApp({ service: 'shipping' }, shippingQueue.url);
    const ids = Array.from({ length: 20 }, (_, n) => `evt-${n}`);
    // The topic's fan-out: every event to both queues; and a producer retry of the first five.
    const bodies = [...ids, ...ids.slice(0, 5)].map((id) => orderCreated(id));
    for (const queue of [billingQueue, shippingQueue]) {
      for (let i = 0; i < bodies.length; i += 10) await queues.sendBatch(queue.url, bodies.slice(i, i + 10));
    }
    for (const queue of [billingQueue, shippingQueue]) {
      await waitFor(async () => (await queues.depth(queue.url)) === 0, `${queue.name} to drain`, 30_000);
    }
    expect([...billing.applied.ids].sort()).toEqual([...ids].sort());
    expect([...shipping.applied.ids].sort()).toEqual([...ids].sort());
    // Each service caught its own duplicates, and its keys carry its name.
    const duplicates = async (app: TestingModule) =>
      (await app.get(IdempotencyStats).snapshot()).totals.duplicates_completed;
    expect(await duplicates(billing.moduleRef)).toBe(5);
    expect(await duplicates(shipping.moduleRef)).toBe(5);
    expect(await redis.get(`${keyPrefix}:billing:order_created:evt-0`)).toBe('1');
    expect(await redis.get(`${keyPrefix}:shipping:order_created:evt-0`)).toBe('1');
  }, 40_000);

  it('two instances of one service share their dedup', async () => {
    const [first, second] = [await startApp({ service: 'billing' }), await startApp({ service: 'billing' })];
    expect((await first.sqs.send(orderCreated('e1'))).status).toBe('OK');
    expect((await second.sqs.send(orderCreated('e1'))).status).toBe('DUPLICATE');
  });

  it('without a service identity, a shared store stops the start-up and says what to set', async () => {
    const failure = startApp({});
    await expect(failure).rejects.toThrow(IdempotencyConfigurationError);
    await expect(startApp({})).rejects.toThrow(
      /RedisIdempotencyStore is shared with other processes.*Set the service option.*OTEL_SERVICE_NAME/s,
    );
  });

  it('takes OTEL_SERVICE_NAME when no service is given, and the option over it', async () => {
    process.env.OTEL_SERVICE_NAME = 'shipping';
    const fromEnvironment = await startApp({});
    await fromEnvironment.sqs.send(orderCreated('e1'));
    expect(await redis.get(`${keyPrefix}:shipping:order_created:e1`)).toBe('1');
    const fromOption = await startApp({ service: 'billing' });
    expect((await fromOption.sqs.send(orderCreated('e1'))).status).toBe('OK');
    expect((await fromOption.moduleRef.get(IdempotencyStats).snapshot()).service).toBe('billing');
  });

  it('on Lambda, keys carry the function name', async () => {
    process.env.OTEL_SERVICE_NAME = 'orders';
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'orders-consumer';
    @Module({
      imports: [
        IdempotencyModule.forRoot({ store: new RedisIdempotencyStore(server.url), keyPrefix }),
        OrderHandlerModule,
      ],
    })
    class LambdaApp {}
    const handler = createSqsLambdaHandler(LambdaApp, { nestOptions: { logger: false } });
    try {
      const response = await handler({ Records: [buildSqsRecord(orderCreated('e1'))] });
      expect(response.batchItemFailures).toEqual([]);
      expect(await redis.get(`${keyPrefix}:orders-consumer:order_created:e1`)).toBe('1');
    } finally {
      await handler.close();
    }
  });

  it('service: false shares keys on purpose, in the 0.1 layout', async () => {
    const [first, second] = [await startApp({ service: false }), await startApp({ service: false })];
    expect((await first.sqs.send(orderCreated('e1'))).status).toBe('OK');
    expect((await second.sqs.send(orderCreated('e1'))).status).toBe('DUPLICATE');
    expect(await redis.get(`${keyPrefix}:order_created:e1`)).toBe('1');
  });

  it('forRootAsync takes the service from its factory', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        IdempotencyModule.forRootAsync({
          useFactory: () => ({ store: new RedisIdempotencyStore(server.url), keyPrefix, service: 'billing' }),
        }),
        SqsModule.forRoot({}),
        OrderHandlerModule,
      ],
    }).compile();
    moduleRef.useLogger(new CapturingLogger());
    await polling.start(moduleRef);
    await moduleRef.init();
    await new SqsTestClient(moduleRef).send(orderCreated('e1'));
    expect(await redis.get(`${keyPrefix}:billing:order_created:e1`)).toBe('1');
  });
});
