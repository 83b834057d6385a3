import { TestingModule, Test } from '@nestjs/testing';
import type { Redis } from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IdempotencyConfigurationError, IdempotencyModule, IdempotencyStore, SqsModule } from '../lib';
import { IdempotencyStats } from '../lib/center';
import { RedisIdempotencyStore, RedisIdempotencyStoreOptions } from '../lib/stores/redis';
import { SqsTestClient } from '../lib/testing';
import { OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { CapturingLogger } from './support/capturing-logger';
import { freePort, RedisServerHandle, startRedisServer } from './support/redis-server';
import { waitFor } from './support/wait-for';

/**
 * A Redis that evicts keys, or keeps none over a restart, forgets completed keys before their ttl,
 * and every duplicate of those events runs again without a word in any log (49,695 completed keys
 * were evicted in one run under allkeys-lru). The store reads the server's settings at start-up and
 * says so, once; or refuses to start. Each case is a private redis-server started with the setting.
 */
describe('the Redis server check at start-up', () => {
  const servers: RedisServerHandle[] = [];
  const dirs: string[] = [];
  const apps: TestingModule[] = [];

  /** A private server: AOF on and noeviction (safe) unless `args` say otherwise. */
  const serve = (...args: string[]) => serveOn(undefined, ...args);
  const serveOn = async (port: number | undefined, ...args: string[]) => {
    const dir = mkdtempSync(join(tmpdir(), 'redis-check-'));
    dirs.push(dir);
    const server = await startRedisServer({
      port,
      args: ['--dir', dir, '--appendonly', 'yes', '--maxmemory-policy', 'noeviction', ...args],
    });
    servers.push(server);
    return server;
  };

  const start = async (
    server: Pick<RedisServerHandle, 'url'>,
    options: RedisIdempotencyStoreOptions = {},
  ) => {
    const logs = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [
        IdempotencyModule.forRoot({
          store: new RedisIdempotencyStore(server.url, options),
          service: 'orders',
          stats: {},
        }),
        SqsModule.forRoot({}),
        OrdersModule,
      ],
    }).compile();
    moduleRef.useLogger(logs);
    apps.push(moduleRef);
    await moduleRef.init();
    const store = moduleRef.get<RedisIdempotencyStore>(IdempotencyStore);
    return { moduleRef, logs, store };
  };

  /** Starts an app on `server` and returns what the check logged and listed, once it has run. */
  const check = async (server: RedisServerHandle) => {
    const { logs, store, moduleRef } = await start(server);
    const warnings = await store.checkServer();
    return {
      warnings,
      logged: logs.matching('warn', /may forget completed keys/, 'RedisIdempotencyStore'),
      moduleRef,
    };
  };

  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close().catch(() => undefined);
    await Promise.all(servers.splice(0).map((server) => server.stop()));
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('says nothing about a safe server (noeviction, AOF on)', async () => {
    const { warnings, logged } = await check(await serve());
    expect(warnings).toEqual([]);
    expect(logged).toEqual([]);
  });

  it.each(['allkeys-lru', 'allkeys-lfu', 'allkeys-random', 'volatile-lru', 'volatile-lfu', 'volatile-ttl'])(
    'warns once about maxmemory-policy %s, saying what it means for dedup',
    async (policy) => {
      const { warnings, logged } = await check(
        await serve('--maxmemory', '64mb', '--maxmemory-policy', policy),
      );
      expect(warnings.map((warning) => warning.code)).toEqual(['redis.maxmemory-policy']);
      expect(logged).toHaveLength(1);
      expect(logged[0]).toContain(`maxmemory-policy ${policy} (maxmemory 67108864 bytes)`);
      expect(logged[0]).toMatch(
        /a duplicate of that event runs its handler again.*Set maxmemory-policy noeviction/,
      );
      if (policy.startsWith('volatile-')) expect(logged[0]).toContain('volatile-* evicts them as readily');
    },
  );

  it('says nothing of an evicting policy that has no maxmemory to act on', async () => {
    const { warnings } = await check(await serve('--maxmemory-policy', 'allkeys-lru'));
    expect(warnings).toEqual([]);
  });

  it('warns about a server that keeps nothing over a restart (no AOF, no RDB)', async () => {
    const { warnings, logged } = await check(await serve('--appendonly', 'no', '--save', ''));
    expect(warnings).toEqual([
      expect.objectContaining({ code: 'redis.persistence', setting: 'appendonly no, save ""' }),
    ]);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/a restart .* forgets every completed key.*Turn on AOF \(appendonly yes/);
  });

  it('warns about RDB snapshots alone: the writes since the last one are lost', async () => {
    const { warnings } = await check(await serve('--appendonly', 'no', '--save', '3600 1'));
    expect(warnings).toEqual([
      expect.objectContaining({
        setting: 'appendonly no, save "3600 1"',
        message: expect.stringMatching(/since the last snapshot/),
      }),
    ]);
  });

  it('reads INFO alone where CONFIG is disabled (managed Redis)', async () => {
    const { warnings } = await check(await serve('--appendonly', 'no', '--rename-command', 'CONFIG', ''));
    expect(warnings).toEqual([
      expect.objectContaining({
        code: 'redis.persistence',
        setting: 'appendonly no, no RDB snapshot since start-up',
      }),
    ]);
  });

  it('names every risky setting in one warning line, and lists them for the Idempotency Center', async () => {
    const { warnings, logged, moduleRef } = await check(
      await serve('--appendonly', 'no', '--maxmemory', '64mb', '--maxmemory-policy', 'volatile-lru'),
    );
    expect(warnings.map((warning) => warning.code)).toEqual(['redis.maxmemory-policy', 'redis.persistence']);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/\(1\) maxmemory-policy volatile-lru .*\(2\) appendonly no/);
    expect((await moduleRef.get(IdempotencyStats).snapshot()).storeWarnings).toEqual(warnings);
  });

  it("with serverCheck: 'fail', refuses to start on a risky server, naming the settings", async () => {
    const server = await serve('--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru');
    const starting = start(server, { serverCheck: 'fail' });
    await expect(starting).rejects.toThrow(IdempotencyConfigurationError);
    await expect(start(server, { serverCheck: 'fail' })).rejects.toThrow(
      /maxmemory-policy allkeys-lru.*The app does not start \(serverCheck: 'fail'\)/s,
    );
  });

  it("with serverCheck: 'fail', starts on a safe server and works", async () => {
    const { moduleRef, store } = await start(await serve(), { serverCheck: 'fail' });
    expect(store.warnings).toEqual([]);
    expect((await new SqsTestClient(moduleRef).send(orderCreated('e1'))).status).toBe('OK');
  });

  it("with serverCheck: 'off', reads nothing", async () => {
    const { store, logs } = await start(await serve('--appendonly', 'no'), { serverCheck: 'off' });
    expect(store.warnings).toEqual([]);
    expect(store.client).toBeUndefined(); // not even connected: the app sent no command yet
    expect(logs.matching('warn', /may forget/)).toEqual([]);
  });

  it('checks again on every (re)connection: unreachable at start-up, then risky, then safe after a restart', async () => {
    const port = await freePort(); // nothing listens there yet: the start-up check cannot run
    const { logs, store, moduleRef } = await start({ url: `redis://127.0.0.1:${port}` });
    const risks = () => logs.matching('warn', /may forget completed keys/, 'RedisIdempotencyStore');
    expect(store.warnings).toEqual([]);
    // The start-up check gives up (its INFO fails after one reconnection attempt) before Redis comes.
    await waitFor(() => store.client !== undefined, 30_000, 'the store to create its client');
    let attempts = 0;
    (store.client as unknown as Redis).on('reconnecting', () => attempts++);
    await waitFor(() => attempts >= 3, 30_000, 'three reconnection attempts');

    // Redis comes up evicting and keeping nothing over a restart: the reconnection checks it.
    const risky = await serveOn(
      port,
      '--appendonly',
      'no',
      '--save',
      '',
      '--maxmemory',
      '64mb',
      '--maxmemory-policy',
      'allkeys-lru',
    );
    await waitFor(() => store.warnings.length === 2, 30_000, 'the check on the first connection');
    expect(store.warnings.map((warning) => warning.code)).toEqual([
      'redis.maxmemory-policy',
      'redis.persistence',
    ]);
    expect(risks()).toHaveLength(1);
    expect((await moduleRef.get(IdempotencyStats).snapshot()).storeWarnings).toEqual(store.warnings);

    // It restarts safe (AOF on, noeviction): the next connection's check clears the list, and says so.
    await risky.stop();
    servers.splice(servers.indexOf(risky), 1);
    await serveOn(port);
    await waitFor(() => store.warnings.length === 0, 30_000, 'the check on the reconnection');
    expect(logs.matching('log', /no longer has settings that forget/, 'RedisIdempotencyStore')).toHaveLength(
      1,
    );
    expect((await moduleRef.get(IdempotencyStats).snapshot()).storeWarnings).toEqual([]);
    expect(risks()).toHaveLength(1);
  });
});
