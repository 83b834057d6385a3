import { Test, TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { IdempotencyModule, SqsModule } from '../lib';
import { RedisIdempotencyStore } from '../lib/stores/redis';
import { SqsTestClient } from '../lib/testing';
import { OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { CapturingLogger } from './support/capturing-logger';
import { requires } from './support/prerequisites';
import { freePort, RedisServerHandle, startRedisServer } from './support/redis-server';
import { waitFor } from './support/wait-for';

const withRedis = requires('redis-server');

/**
 * What a newcomer reads when Redis is not there: each record's reason names the store, the address
 * and the cause; the store logs one line when Redis goes away and one when it answers again (no
 * ioredis "Unhandled error event" stacks twice a second), whether it owns the connection or was
 * handed your client (its listeners leave your client when the app closes).
 */
withRedis.describe('Redis unreachable: what the operator reads', () => {
  const moduleRefs: TestingModule[] = [];
  let server: RedisServerHandle | undefined;
  let consoleErrors: jest.SpyInstance;

  const start = async (store: RedisIdempotencyStore) => {
    const logs = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({ store, service: 'orders' }), SqsModule.forRoot({}), OrdersModule],
    }).compile();
    moduleRef.useLogger(logs);
    await moduleRef.init();
    moduleRefs.push(moduleRef);
    return { sqs: new SqsTestClient(moduleRef), logs, ledger: moduleRef.get(OrdersLedger) };
  };
  const storeLines = (logs: CapturingLogger) =>
    logs.lines.filter((line) => line.context === 'RedisIdempotencyStore');

  beforeEach(() => {
    consoleErrors = jest.spyOn(console, 'error');
  });
  afterEach(async () => {
    for (const moduleRef of moduleRefs.splice(0)) await moduleRef.close().catch(() => undefined);
    await server?.stop();
    server = undefined;
    consoleErrors.mockRestore();
  });

  it('owned connection: one line down, one line back, and reasons that name Redis, its address and the cause', async () => {
    const port = await freePort(); // nothing listens there yet
    const store = new RedisIdempotencyStore(`redis://127.0.0.1:${port}`, { serverCheck: 'off' });
    const { sqs, logs, ledger } = await start(store);

    const down = await sqs.sendBatch([orderCreated('a'), orderCreated('b')]);
    expect(down.statuses).toEqual(['FAILED', 'FAILED']);
    const reason = down.results[0].error!.message;
    expect(reason).toMatch(
      new RegExp(
        `the idempotency store tryAcquire\\(".*:a"\\) failed: RedisIdempotencyStore: Redis at ` +
          `redis://127\\.0\\.0\\.1:${port} is unreachable \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\)\\. ` +
          'The record fails closed',
      ),
    );
    expect(reason).not.toMatch(/max retries|maxRetriesPerRequest|\.\./);

    // ioredis keeps reconnecting (every 50 ms, then slower): the log still holds one line.
    const client = store.client as unknown as Redis;
    let attempts = 0;
    client.on('reconnecting', () => attempts++);
    await waitFor(() => attempts >= 3, 30_000, 'three reconnection attempts');
    expect(storeLines(logs)).toEqual([
      {
        level: 'warn',
        context: 'RedisIdempotencyStore',
        message: expect.stringMatching(
          new RegExp(`^Redis at redis://127\\.0\\.0\\.1:${port} is unreachable \\(connect ECONNREFUSED`),
        ),
      },
    ]);
    expect(consoleErrors).not.toHaveBeenCalled(); // no "[ioredis] Unhandled error event" stacks

    server = await startRedisServer({ port });
    await waitFor(() => client.status === 'ready', 30_000, 'ioredis to reconnect');
    expect((await sqs.send(orderCreated('c'))).status).toBe('OK');
    expect(ledger.calls).toBe(1);
    const lines = storeLines(logs);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({
      level: 'log',
      message: expect.stringMatching(/answers again \(after \d+\.\d s\)/),
    });
  });

  it('owned connection on a hung server: the reason says it did not answer in time, and the log says so once', async () => {
    server = await startRedisServer();
    const hung = server;
    const store = new RedisIdempotencyStore(
      { host: '127.0.0.1', port: hung.port, commandTimeout: 200 },
      { serverCheck: 'off' }, // its one start-up warning (no persistence) is not what this spec reads
    );
    const { sqs, logs } = await start(store);
    expect((await sqs.send(orderCreated('before'))).status).toBe('OK');

    process.kill(hung.pid, 'SIGSTOP');
    try {
      const stuck = await sqs.sendBatch([orderCreated('h1'), orderCreated('h2')]);
      expect(stuck.statuses).toEqual(['FAILED', 'FAILED']);
      expect(stuck.results[0].error!.message).toContain(
        `RedisIdempotencyStore: Redis at 127.0.0.1:${hung.port} did not answer within 200 ms`,
      );
    } finally {
      process.kill(hung.pid, 'SIGCONT');
    }
    expect((await sqs.send(orderCreated('after'))).status).toBe('OK');
    expect(storeLines(logs).map((line) => line.level)).toEqual(['warn', 'log']);
    expect(storeLines(logs)[0].message).toContain('is unreachable (no answer within 200 ms)');
  });

  it('a client you pass in: one shared listener, one line down, and the reason still names Redis and its address', async () => {
    const port = await freePort();
    const redis = new Redis({
      host: '127.0.0.1',
      port,
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      disconnectTimeout: 100,
    });
    const ownErrors: Error[] = [];
    redis.on('error', (error) => ownErrors.push(error)); // yours to listen to
    try {
      const { sqs, logs } = await start(new RedisIdempotencyStore(redis));
      const { status, result } = await sqs.send(orderCreated('x'));
      expect(status).toBe('FAILED');
      expect(result.error!.message).toContain(
        `RedisIdempotencyStore: Redis at 127.0.0.1:${port} is unreachable (`,
      );
      expect(result.error!.message).not.toMatch(/max retries|\.\./);
      expect(redis.listenerCount('error')).toBe(2); // yours, and the store's
      expect(storeLines(logs)).toEqual([
        expect.objectContaining({
          level: 'warn',
          message: expect.stringContaining(`127.0.0.1:${port} is unreachable`),
        }),
      ]);
      expect(ownErrors.length).toBeGreaterThan(0);
      await moduleRefs.pop()!.close();
      expect(redis.listenerCount('error')).toBe(1); // yours alone again
    } finally {
      redis.disconnect();
    }
  });
});
