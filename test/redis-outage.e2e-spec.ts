import { Test, TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  IdempotencyModule,
  IdempotencyModuleOptions,
  IdempotencyStoreUnavailableError,
  SqsModule,
} from '../lib';
import { IdempotencyStats } from '../lib/center';
import { RedisIdempotencyStore, recommendedIoRedisOptions } from '../lib/stores/redis';
import { SqsTestClient } from '../lib/testing';
import { OrdersLedger, OrdersModule, deferred, orderCreated } from './fixtures/orders.fixture';
import { CapturingLogger } from './support/capturing-logger';
import { freePort, RedisServerHandle, startRedisServer } from './support/redis-server';
import { requires } from './support/prerequisites';
import { waitFor } from './support/wait-for';

const withRedis = requires('redis-server');

/**
 * Redis goes away mid-run and comes back on the same port. With the recommended ioredis settings
 * the store fails fast while it is gone: by default the record fails closed (the handler never runs
 * unclaimed, SQS redelivers it); with `onStoreError: 'process'` the handler runs without dedup and
 * it is logged. When Redis returns, the same app dedups again without a restart.
 */
withRedis.describe('Redis outage', () => {
  let server: RedisServerHandle;
  const apps: Array<{ moduleRef: TestingModule; redis: Redis }> = [];

  const start = async (options: Pick<IdempotencyModuleOptions, 'onStoreError'> = {}) => {
    // disconnectTimeout: a socket still dialling a stopped server is dropped at teardown, not after 2 s.
    const redis = new Redis(server.url, { ...recommendedIoRedisOptions, disconnectTimeout: 100 });
    redis.on('error', () => undefined); // connection errors while Redis is down are expected here
    const moduleRef = await Test.createTestingModule({
      imports: [
        IdempotencyModule.forRoot({
          store: new RedisIdempotencyStore(redis),
          service: 'orders',
          stats: {},
          ...options,
        }),
        SqsModule.forRoot({}),
        OrdersModule,
      ],
    }).compile();
    const logs = new CapturingLogger();
    moduleRef.useLogger(logs);
    await moduleRef.init();
    apps.push({ moduleRef, redis });
    const totals = async () => (await moduleRef.get(IdempotencyStats).snapshot()).totals;
    return { sqs: new SqsTestClient(moduleRef), ledger: moduleRef.get(OrdersLedger), logs, redis, totals };
  };
  const restart = async () => {
    server = await startRedisServer({ port: server.port });
  };
  const untilReady = async (redis: Redis) => {
    await waitFor(() => redis.status === 'ready', 30_000, 'ioredis to reconnect');
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
    expect(down.ms).toBeLessThan(9_000); // not ioredis's default ~10 s of queued retries

    await restart();
    await untilReady(redis);
    // The redeliveries now run once, and their duplicates are caught again.
    const redelivered = await sqs.sendRecords(down.result.records.map(SqsTestClient.redelivery));
    expect(redelivered.statuses).toEqual(['OK', 'OK', 'OK']);
    expect((await sqs.send(orderCreated('d1'))).status).toBe('DUPLICATE');
    expect(ledger.count('order-d1')).toBe(1);
  });

  it("with onStoreError: 'process', runs handlers without dedup while Redis is down, logs it, and dedups again after", async () => {
    const { sqs, ledger, logs, redis, totals } = await start({ onStoreError: 'process' });
    await server.stop();
    const down = await sqs.sendBatch([orderCreated('p1'), orderCreated('p1')]);
    expect(down.statuses).toEqual(['OK', 'OK']);
    expect(ledger.count('order-p1')).toBe(2); // availability over exactly-once, as configured
    expect(await totals()).toMatchObject({ handled: 2, store_errors: 2 });
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

  it('keeps the effect of a handler that was running when Redis went away, and counts the lost completion', async () => {
    const { sqs, ledger, totals } = await start();
    const inFlight = deferred();
    ledger.script.set('order-mid', inFlight.promise);
    const pending = sqs.send(orderCreated('mid'));
    await waitFor(() => ledger.calls === 1, 30_000, 'the claim of "mid" and its handler to start');

    await server.stop();
    inFlight.resolve();
    const { status } = await pending;
    expect(status).toBe('OK'); // the handler's effect happened: failing it would only run it again
    expect(ledger.count('order-mid')).toBe(1);
    // The event is unprotected now (a duplicate after the lease may run it again): counted, not only logged.
    expect(await totals()).toMatchObject({ handled: 1, store_errors: 1, completions_lost: 1 });
  });
});

/**
 * Redis is not there when the app starts. By default the app starts anyway (a store that needs its
 * database before it can boot turns a Redis blip into a crash loop): records fail closed until
 * Redis answers, then succeed, with no restart. `failFastOnStartup` refuses to start instead.
 */
withRedis.describe('Redis down at start-up', () => {
  const moduleRefs: TestingModule[] = [];
  let server: RedisServerHandle | undefined;

  const compile = async (store: RedisIdempotencyStore) => {
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({ store, service: 'orders' }), SqsModule.forRoot({}), OrdersModule],
    }).compile();
    moduleRef.useLogger(new CapturingLogger());
    moduleRefs.push(moduleRef);
    return moduleRef;
  };

  afterEach(async () => {
    for (const moduleRef of moduleRefs.splice(0)) await moduleRef.close().catch(() => undefined);
    await server?.stop();
    server = undefined;
  });

  it('starts without Redis, fails records closed until Redis is up, then succeeds without a restart', async () => {
    const port = await freePort(); // nothing listens there yet
    const moduleRef = await compile(new RedisIdempotencyStore(`redis://127.0.0.1:${port}`));
    await moduleRef.init(); // the app starts
    const sqs = new SqsTestClient(moduleRef);
    const ledger = moduleRef.get(OrdersLedger);

    const down = await sqs.sendBatch([orderCreated('s1'), orderCreated('s2')]);
    expect(down.statuses).toEqual(['FAILED', 'FAILED']);
    expect(String(down.results[0].error)).toMatch(/tryAcquire\(".*:s1"\) failed: .*The record fails closed/);
    expect(ledger.calls).toBe(0); // no handler ran unclaimed

    server = await startRedisServer({ port });
    // The same app, no restart: the redeliveries run once (ioredis reconnects on its own).
    const redeliveries = down.records.map(SqsTestClient.redelivery);
    const deadline = Date.now() + 30_000;
    let statuses = (await sqs.sendRecords(redeliveries)).statuses;
    while (statuses.includes('FAILED') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      statuses = (await sqs.sendRecords(redeliveries.filter((_, i) => statuses[i] === 'FAILED'))).statuses;
    }
    expect(statuses.every((status) => status === 'OK')).toBe(true);
    expect((await sqs.send(orderCreated('s1'))).status).toBe('DUPLICATE');
    expect(ledger.count('order-s1')).toBe(1);
    expect(ledger.count('order-s2')).toBe(1);
  });

  it('with failFastOnStartup, refuses to start and says where Redis was expected and what to do', async () => {
    const port = await freePort();
    const store = new RedisIdempotencyStore(`redis://:s3cret@127.0.0.1:${port}`, { failFastOnStartup: true });
    const moduleRef = await compile(store);
    const started = Date.now();
    const failure = await moduleRef.init().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(IdempotencyStoreUnavailableError);
    const message = (failure as Error).message;
    expect(message).toContain(
      `RedisIdempotencyStore could not reach Redis at redis://***@127.0.0.1:${port} at start-up`,
    );
    expect(message).toMatch(/ECONNREFUSED|max retries/i);
    expect(message).toContain('Start it or fix the address; or drop failFastOnStartup');
    expect(message).not.toContain('s3cret');
    expect(Date.now() - started).toBeLessThan(9_000); // not ioredis's ~10 s of retries
    // The connection the store owned is dropped, not left reconnecting behind a failed start-up.
    const owned = store.client as unknown as Redis;
    let attempts = 0;
    owned.on('connecting', () => attempts++);
    await new Promise((resolve) => setTimeout(resolve, 500)); // ioredis retries every 50-100 ms at first
    expect(attempts).toBe(0);
  });

  it('with failFastOnStartup, bounds the wait on a Redis that accepts but does not answer', async () => {
    server = await startRedisServer();
    const hung = server;
    // A client without the recommended settings would queue its PING for ~10 s: the check does not wait.
    const redis = new Redis(hung.url, { lazyConnect: true });
    await redis.connect();
    process.kill(hung.pid, 'SIGSTOP');
    try {
      const moduleRef = await compile(
        new RedisIdempotencyStore(redis, { failFastOnStartup: true, startupTimeoutMs: 300 }),
      );
      await expect(moduleRef.init()).rejects.toThrow(
        new RegExp(
          `could not reach Redis at 127\\.0\\.0\\.1:${hung.port} at start-up \\(no answer to PING within 300 ms\\)`,
        ),
      );
      expect(redis.status).toBe('ready'); // your client stays yours: the store does not close it
    } finally {
      process.kill(hung.pid, 'SIGCONT');
      redis.disconnect();
    }
  });

  it('with failFastOnStartup and Redis up, starts and works', async () => {
    server = await startRedisServer();
    const moduleRef = await compile(new RedisIdempotencyStore(server.url, { failFastOnStartup: true }));
    await moduleRef.init();
    expect((await new SqsTestClient(moduleRef).send(orderCreated('up'))).status).toBe('OK');
  });
});
