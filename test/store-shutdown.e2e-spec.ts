import { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createIdempotencyTable } from '../lib/stores/postgres';
import { DynaliteServer, startDynalite } from './support/dynalite';
import { ensureBuilt } from './support/ensure-built';
import { forkCompiled, removeCompiled } from './support/fork-ts';
import { createTestDatabase, TestDatabase } from './support/postgres-database';
import { requires } from './support/prerequisites';
import { waitFor } from './support/wait-for';

/**
 * A service on each store exits when it is told to stop, and only then: a Nest app in a process of
 * its own (test/fixtures/store-shutdown.main.ts, the package as built), its store built per app as the
 * guides build it, records handled so the store has connected, then stopped by SIGTERM (with
 * `enableShutdownHooks()`) or by `app.close()`. The process must exit by itself, with code 0, within
 * seconds: anything the store left open (a Redis connection, a pool, a socket, a timer) keeps it alive.
 * A Redis store given ioredis options used to keep its connection open forever: Jest "did not exit",
 * a SIGTERMed service never ended.
 */
ensureBuilt(); // the child loads the package from dist/

const FIXTURE = join(__dirname, 'fixtures', 'store-shutdown.main.ts');
/** From the signal (or `app.close()`) to the exit: a store closes in milliseconds; a leak never ends. */
const EXIT_WITHIN_MS = 15_000;
/** From the spawn to the records handled (or the start refused), on a busy machine. */
const START_WITHIN_MS = 45_000;

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** From the stop (SIGTERM sent, or "closed" printed) to the exit. */
  afterStopMs: number;
  output: string;
}

/** Runs the app on `store` and stops it by `shutdown`; resolves when it exits (or is killed after the deadline). */
function runUntilExit(
  store: string,
  shutdown: 'sigterm' | 'close',
  env: Record<string, string | undefined>,
): Promise<Ended> {
  const child: ChildProcess = forkCompiled(FIXTURE, { ...env, STORE: store, SHUTDOWN: shutdown });
  let output = '';
  let stoppedAt: number | undefined;
  // Past a deadline it will not exit by itself (it says what it holds after 5 s): it is ended.
  let deadline = setTimeout(() => child.kill('SIGKILL'), START_WITHIN_MS + EXIT_WITHIN_MS);
  const stopped = () => {
    stoppedAt = Date.now();
    clearTimeout(deadline);
    deadline = setTimeout(() => child.kill('SIGKILL'), EXIT_WITHIN_MS);
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    output += String(chunk);
    if (stoppedAt !== undefined) return;
    if (shutdown === 'sigterm' && output.includes('ready\n')) {
      child.kill('SIGTERM');
      stopped();
    } else if (shutdown === 'close' && output.includes('closed\n')) stopped();
  });
  child.stderr!.on('data', (chunk: Buffer) => (output += String(chunk)));
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      clearTimeout(deadline);
      resolve({ code, signal, afterStopMs: stoppedAt === undefined ? NaN : Date.now() - stoppedAt, output });
    });
  });
}

/** It stopped as asked and exited by itself, promptly, with nothing left open. */
function expectCleanExit(ended: Ended, shutdown: 'sigterm' | 'close'): void {
  const said = `${shutdown}: code ${ended.code}, signal ${ended.signal}, ${ended.afterStopMs} ms after the stop\n${ended.output}`;
  expect({ said, stopped: Number.isFinite(ended.afterStopMs) }).toEqual({ said, stopped: true });
  expect({ said, signal: ended.signal, code: ended.code }).toEqual({ said, signal: null, code: 0 });
  expect(ended.afterStopMs).toBeLessThan(EXIT_WITHIN_MS);
}

const redis = requires('redis-server');
const postgres = requires('postgres');

/** The apps, each with what its store needs; the gated ones only where their server is. */
const STORES: Array<{ store: string; name: string; gate?: { available: boolean; it: jest.It } }> = [
  { store: 'in-memory', name: 'in-memory' },
  { store: 'redis-url', name: 'Redis, from a URL', gate: redis },
  { store: 'redis-options', name: 'Redis, from ioredis options', gate: redis },
  { store: 'dynamodb', name: 'DynamoDB (dynalite), its own client' },
  { store: 'postgres', name: 'Postgres, its own pool', gate: postgres },
];
const SHUTDOWNS = ['sigterm', 'close'] as const;
/** Apps started at once: each is a Node process; more would only queue on the CPU. */
const AT_ONCE = 4;

describe('a Nest app on each store exits on SIGTERM and on app.close(), leaving nothing open', () => {
  let dynamo: DynaliteServer;
  let db: TestDatabase | undefined;
  const ended = new Map<string, Promise<Ended>>();
  let runCount = 0;

  // Every app runs from here, a few at a time; each test below awaits its own.
  beforeAll(async () => {
    dynamo = await startDynalite();
    const env: Record<string, Record<string, string | undefined>> = {
      'in-memory': {},
      'redis-url': { REDIS_URL: process.env.REDIS_URL ?? '' },
      'redis-options': { REDIS_URL: process.env.REDIS_URL ?? '' },
      dynamodb: {
        // As an app points the store's own client at DynamoDB Local: the SDK's environment.
        IDEMPOTENCY_TABLE: await dynamo.createTable(),
        AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
      },
    };
    if (postgres.available) {
      db = await createTestDatabase('store_shutdown');
      await createIdempotencyTable(db.pool({ max: 1 }));
      env.postgres = { DATABASE_URL: db.url };
    }
    const runs = STORES.filter(({ gate }) => gate?.available ?? true).flatMap(({ store }) =>
      SHUTDOWNS.map((shutdown) => ({ store, shutdown, env: env[store] })),
    );
    // REDIS_URL unset: the store used to connect to localhost:6379 and never close (Jest hung).
    runs.unshift({ store: 'redis-url', shutdown: 'unset' as never, env: { REDIS_URL: undefined } });
    runCount = runs.length;
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < runs.length) {
        const { store, shutdown, env: its } = runs[next++];
        const run = runUntilExit(store, shutdown, its);
        ended.set(`${store} ${shutdown}`, run);
        await run;
      }
    };
    // Not awaited: the tests await each run as it ends.
    void Promise.all(Array.from({ length: AT_ONCE }, lane));
  }, 60_000);
  afterAll(async () => {
    // Every run ends, by itself or at its deadline.
    await waitFor(() => ended.size === runCount, 120_000, 'every app to start');
    await Promise.all(ended.values());
    removeCompiled();
    await dynamo?.stop();
    await db?.drop();
  }, 240_000);

  it('Redis with REDIS_URL unset: refuses to start, naming the variable, and the process ends by itself', async () => {
    await waitFor(() => ended.has('redis-url unset'), 60_000, 'the app without REDIS_URL to start');
    const { code, signal, output } = await ended.get('redis-url unset')!;
    expect(output).toMatch(
      /RedisIdempotencyStore: nothing to connect to: it was given undefined \(an unset environment variable, such as REDIS_URL\?\)/,
    );
    expect({ output, code, signal }).toEqual({ output, code: 1, signal: null });
  }, 120_000);

  for (const { store, name, gate } of STORES) {
    describe(name, () => {
      for (const shutdown of SHUTDOWNS) {
        (gate?.it ?? it)(
          `exits on ${shutdown === 'sigterm' ? 'SIGTERM' : 'app.close()'}`,
          async () => {
            await waitFor(() => ended.has(`${store} ${shutdown}`), 120_000, `the ${store} app to start`);
            expectCleanExit(await ended.get(`${store} ${shutdown}`)!, shutdown);
          },
          180_000,
        );
      }
    });
  }
});
