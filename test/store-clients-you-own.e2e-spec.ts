import { Redis } from 'ioredis';
import { Client, Pool } from 'pg';
import type { IdempotencyStore } from '../lib';
import { createIdempotencyTable, PostgresIdempotencyStore } from '../lib/stores/postgres';
import { RedisIdempotencyStore, recommendedIoRedisOptions } from '../lib/stores/redis';
import { OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { createTestDatabase, TestDatabase } from './support/postgres-database';
import { requires } from './support/prerequisites';
import { freePort, RedisServerHandle, startRedisServer } from './support/redis-server';
import { TcpFaultProxy } from './support/tcp-fault-proxy';
import { createTestApp, TestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

/**
 * A client or pool the app builds and hands to a store, exactly as the README shows it (a
 * `new Pool(...)` with no `error` listener; an ioredis client with `recommendedIoRedisOptions`):
 * the database or Redis restarts under load, and the process neither dies (an unheard `error`
 * event of a pool is an uncaught exception) nor prints ioredis's stacks. Nothing is lost, nothing
 * runs twice, each failed record has its one log line, and the store says once that the backend
 * went away and once that it answers again.
 */

/** Sends `ids` in batches of 10 until each one is handled; answers how many records failed meanwhile. */
async function deliverAll(app: TestApp, ids: readonly string[]): Promise<number> {
  let failed = 0;
  let pending = [...ids];
  for (let round = 0; pending.length > 0; round++) {
    if (round > 50) throw new Error(`still undelivered after 50 rounds: ${pending.join(', ')}`);
    const next: string[] = [];
    for (let start = 0; start < pending.length; start += 10) {
      const chunk = pending.slice(start, start + 10);
      const { statuses } = await app.sqs.sendBatch(chunk.map((id) => orderCreated(id)));
      statuses.forEach((status, index) => {
        if (status === 'OK') return;
        expect(status).toBe('FAILED'); // never DUPLICATE: nothing ran before
        failed++;
        next.push(chunk[index]);
      });
    }
    pending = next;
  }
  return failed;
}

/** Each event's handler ran exactly once. */
function expectEachRanOnce(app: TestApp, ids: readonly string[]): void {
  const ledger = app.get(OrdersLedger);
  expect(ids.filter((id) => ledger.count(`order-${id}`) !== 1)).toEqual([]);
  expect(ledger.calls).toBe(ids.length);
}

const failedRecordLines = (app: TestApp) =>
  app.logs.lines.filter((line) => line.context === 'SqsRecord' && line.message.includes('status=FAILED'));

const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

requires('postgres').describe('a pg Pool the app built (no error listener) through database restarts', () => {
  let db: TestDatabase;
  let proxy: TcpFaultProxy;
  let app: TestApp | undefined;
  let pool: Pool | undefined;

  beforeAll(async () => {
    db = await createTestDatabase('owned_pool');
    const setup = db.pool();
    await createIdempotencyTable(setup);
    const url = new URL(db.url);
    proxy = await TcpFaultProxy.start(`http://${url.hostname}:${url.port || 5432}`);
  });
  afterAll(async () => {
    await app?.close();
    // Ended before the database is dropped: a failed run must not crash the process there.
    pool?.on('error', () => undefined);
    await pool?.end();
    await proxy?.close();
    await db?.drop();
  });

  it('0 crashes, 0 lost, 0 run twice, one line per failed record, one line down and one back', async () => {
    const url = new URL(db.url);
    url.host = `127.0.0.1:${proxy.port}`;
    // As the README builds it: nothing listens to the pool's `error` event.
    pool = new Pool({ connectionString: url.toString(), max: 6 });
    expect(pool.listenerCount('error')).toBe(0);
    const store = new PostgresIdempotencyStore(pool, { sweeper: false });
    expect(pool.listenerCount('error')).toBe(1);
    app = await createTestApp({ idempotency: { store, service: 'orders' }, imports: [OrdersModule] });

    const before = ids('a', 60);
    expect(await deliverAll(app, before)).toBe(0);
    expect(pool.idleCount).toBeGreaterThan(0);

    // The database restarts: every connection of the pool is terminated by the server (57P01) while
    // idle. Without a listener on the pool, that `error` event kills the process.
    const admin = new Client({ connectionString: process.env.POSTGRES_ADMIN_URL });
    await admin.connect();
    try {
      const { rows } = await admin.query(
        `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [db.name],
      );
      expect(rows.length).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    await waitFor(() => pool!.idleCount === 0, 30_000, 'the pool to drop its terminated connections');
    const storeLines = () => app!.logs.lines.filter((line) => line.context === 'PostgresIdempotencyStore');
    await waitFor(() => storeLines().length === 1, 30_000, 'the line saying a connection failed');
    expect(storeLines()[0]).toMatchObject({
      level: 'warn',
      message: expect.stringMatching(
        /a database connection failed \(terminating connection due to administrator command, 57P01\)/,
      ),
    });

    // Then it is away for a while (connections refused), and comes back.
    await proxy.down();
    const during = ids('b', 30);
    const { statuses } = await app.sqs.sendBatch(during.slice(0, 10).map((id) => orderCreated(id)));
    expect(statuses).toEqual(Array(10).fill('FAILED'));
    await proxy.up();
    const failedAfter = await deliverAll(app, [...during, ...ids('c', 60)]);

    expectEachRanOnce(app, [...before, ...during, ...ids('c', 60)]);
    expect(failedRecordLines(app)).toHaveLength(10 + failedAfter);
    expect(storeLines().map((line) => line.level)).toEqual(['warn', 'log']);
    expect(storeLines()[1].message).toMatch(/answers again \(after \d+\.\d s\)/);

    await app.close();
    app = undefined;
    expect(pool.listenerCount('error')).toBe(0); // the app's pool is the app's again
  });
});

requires('redis-server').describe('an ioredis client the app built, through a Redis restart', () => {
  let server: RedisServerHandle | undefined;
  let app: TestApp | undefined;
  let redis: Redis | undefined;
  let consoleErrors: jest.SpyInstance;

  beforeEach(() => (consoleErrors = jest.spyOn(console, 'error')));
  afterEach(async () => {
    await app?.close();
    redis?.disconnect();
    await server?.stop();
    consoleErrors.mockRestore();
  });

  it('no ioredis stacks, 0 lost, 0 run twice, one line per failed record, one line down and one back', async () => {
    const port = await freePort();
    server = await startRedisServer({ port });
    redis = new Redis({ port, host: '127.0.0.1', ...recommendedIoRedisOptions });
    const store: IdempotencyStore = new RedisIdempotencyStore(redis, { serverCheck: 'off' });
    app = await createTestApp({ idempotency: { store, service: 'orders' }, imports: [OrdersModule] });
    const storeLines = () => app!.logs.lines.filter((line) => line.context === 'RedisIdempotencyStore');

    const before = ids('a', 60);
    expect(await deliverAll(app, before)).toBe(0);

    await server.stop();
    let attempts = 0;
    redis.on('reconnecting', () => attempts++);
    const during = ids('b', 10);
    const { statuses } = await app.sqs.sendBatch(during.map((id) => orderCreated(id)));
    expect(statuses).toEqual(Array(10).fill('FAILED'));
    await waitFor(() => attempts >= 3, 30_000, 'three reconnection attempts');
    expect(consoleErrors).not.toHaveBeenCalled(); // no "[ioredis] Unhandled error event" stacks

    // Redis comes back on the same port (empty: these servers keep nothing over a restart, and no
    // event was completed while it was away).
    server = await startRedisServer({ port });
    await waitFor(() => redis!.status === 'ready', 30_000, 'ioredis to reconnect');
    const failedAfter = await deliverAll(app, [...during, ...ids('c', 60)]);

    expectEachRanOnce(app, [...before, ...during, ...ids('c', 60)]);
    expect(failedRecordLines(app)).toHaveLength(10 + failedAfter);
    expect(storeLines().map((line) => line.level)).toEqual(['warn', 'log']);
    expect(storeLines()[0].message).toMatch(new RegExp(`Redis at 127\\.0\\.0\\.1:${port} is unreachable`));
    expect(consoleErrors).not.toHaveBeenCalled();

    await app.close();
    app = undefined;
    expect(redis.listenerCount('error')).toBe(0); // the app's client is the app's again
  });
});
