import { Test, TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  IdempotencyModule,
  IdempotencyModuleOptions,
  RedisIdempotencyStore,
  SqsModule,
  SqsTestClient,
  recommendedIoRedisOptions,
} from '../lib';
import { OrdersLedger, OrdersModule, deferred, orderCreated } from './fixtures/orders.fixture';
import { CaptureLogger } from './support/capture-logger';
import { RedisServerHandle, startRedisServer } from './support/redis-server';

/**
 * Redis goes away mid-run and comes back on the same port. With the recommended ioredis settings
 * the store fails fast while it is gone: by default the record fails closed (the handler never runs
 * unclaimed, SQS redelivers it); with `onStoreError: 'process'` the handler runs without dedup and
 * it is logged. When Redis returns, the same app dedups again without a restart.
 */
describe('Redis outage', () => {
  let server: RedisServerHandle;
  const apps: Array<{ moduleRef: TestingModule; redis: Redis }> = [];

  const start = async (options: Pick<IdempotencyModuleOptions, 'onStoreError'> = {}) => {
    // disconnectTimeout: a socket still dialling a stopped server is dropped at teardown, not after 2 s.
    const redis = new Redis(server.url, { ...recommendedIoRedisOptions, disconnectTimeout: 100 });
    redis.on('error', () => undefined); // connection errors while Redis is down are expected here
    const moduleRef = await Test.createTestingModule({
      imports: [
        IdempotencyModule.forRoot({ store: new RedisIdempotencyStore(redis), ...options }),
        SqsModule.forRoot({}),
        OrdersModule,
      ],
    }).compile();
    const logs = new CaptureLogger();
    moduleRef.useLogger(logs);
    await moduleRef.init();
    apps.push({ moduleRef, redis });
    return { sqs: new SqsTestClient(moduleRef), ledger: moduleRef.get(OrdersLedger), logs, redis };
  };
  const restart = async () => {
    server = await startRedisServer({ port: server.port });
  };
  const untilReady = async (redis: Redis) => {
    for (let attempt = 0; attempt < 200 && redis.status !== 'ready'; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(redis.status).toBe('ready');
  };
  const timed = async <T>(work: Promise<T>) => {
    const started = Date.now();
    const result = await work;
    return { result, ms: Date.now() - started };
  };

  beforeEach(async () => {
    server = await startRedisServer();
  });
  afterEach(async () => {
    for (const { moduleRef, redis } of apps.splice(0)) {
      await moduleRef.close();
      redis.disconnect();
    }
    await server.stop();
  });

  it('fails records closed while Redis is down (fast, handler not run), and recovers without a restart', async () => {
    const { sqs, ledger, redis } = await start();
    expect((await sqs.send(orderCreated('before'))).status).toBe('OK');

    await server.stop();
    const down = await timed(sqs.sendBatch([orderCreated('d1'), orderCreated('d2'), orderCreated('d3')]));
    expect(down.result.statuses).toEqual(['FAILED', 'FAILED', 'FAILED']);
    expect(down.result.response.batchItemFailures).toHaveLength(3);
    expect(String(down.result.results[0].error)).toMatch(
      /idempotency store tryAcquire\(".*:d1"\) failed: .*The record fails closed/i,
    );
    expect(ledger.calls).toBe(1); // only "before": no handler ran unclaimed
    expect(down.ms).toBeLessThan(5_000); // not ioredis's default ~10 s of queued retries

    await restart();
    await untilReady(redis);
    // The redeliveries now run once, and their duplicates are caught again.
    const redelivered = await sqs.sendRecords(down.result.records.map(SqsTestClient.redelivery));
    expect(redelivered.statuses).toEqual(['OK', 'OK', 'OK']);
    expect((await sqs.send(orderCreated('d1'))).status).toBe('DUPLICATE');
    expect(ledger.count('order-d1')).toBe(1);
  });

  it("with onStoreError: 'process', runs handlers without dedup while Redis is down, logs it, and dedups again after", async () => {
    const { sqs, ledger, logs, redis } = await start({ onStoreError: 'process' });
    await server.stop();
    const down = await sqs.sendBatch([orderCreated('p1'), orderCreated('p1')]);
    expect(down.statuses).toEqual(['OK', 'OK']);
    expect(ledger.count('order-p1')).toBe(2); // availability over exactly-once, as configured
    expect(
      logs.matching(
        'error',
        /Store failed to claim ".*:p1" .*; running OrdersHandler.onOrderCreated without dedup/,
      ),
    ).toHaveLength(2);

    await restart();
    await untilReady(redis);
    const after = await sqs.sendBatch([orderCreated('p2'), orderCreated('p2')]);
    expect([...after.statuses].sort()).toEqual(['IN_PROGRESS', 'OK']);
    expect((await sqs.send(orderCreated('p2'))).status).toBe('DUPLICATE');
    expect(ledger.count('order-p2')).toBe(1);
  });

  it('keeps the effect of a handler that was running when Redis went away, and logs the lost completion', async () => {
    const { sqs, ledger, logs } = await start();
    const inFlight = deferred();
    ledger.script.set('order-mid', inFlight.promise);
    const pending = sqs.send(orderCreated('mid'));
    await new Promise((resolve) => setTimeout(resolve, 100)); // claimed, handler running

    await server.stop();
    inFlight.resolve();
    const { status } = await pending;
    expect(status).toBe('OK'); // the handler's effect happened: failing it would only run it again
    expect(ledger.count('order-mid')).toBe(1);
    expect(logs.matching('error', /Store failed to mark ".*:mid" completed/)).toHaveLength(1);
  });
});
