import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { killOnExit } from './support/kill-on-exit';
import { requires } from './support/prerequisites';
import { RedisServerHandle, startRedisServer } from './support/redis-server';

const withRedis = requires('redis-server');
const ROOT = join(__dirname, '..');

/**
 * `npm test` never touches a Redis it did not start, even when REDIS_URL names one (a developer's
 * own Redis, in the environment for their app): the Jest global setup replaces REDIS_URL with a
 * private redis-server. Proven by running a Redis spec in a child Jest with REDIS_URL pointing at a
 * "user's" Redis: afterwards it holds exactly its own key, and not one connection was opened to it.
 */
withRedis.describe('the test suite and a Redis it did not start', () => {
  let users: RedisServerHandle;
  let client: Redis;
  afterAll(async () => {
    client?.disconnect();
    await users?.stop();
  });

  it('ignores REDIS_URL: no key written, no connection opened', async () => {
    users = await startRedisServer();
    client = new Redis(users.url);
    await client.set('users-own-key', 'untouched');
    const connectionsBefore = await connectionsReceived(client);

    const { code, output } = await runJest(['test/redis-store.e2e-spec.ts'], { REDIS_URL: users.url });

    expect({ code, tail: output.slice(-2000) }).toMatchObject({ code: 0 });
    expect(output).toMatch(/Tests:\s+\d+ passed/); // the Redis spec ran, on the suite's own server
    expect(await client.dbsize()).toBe(1);
    expect(await client.get('users-own-key')).toBe('untouched');
    expect(await connectionsReceived(client)).toBe(connectionsBefore);
  }, 120_000);
});

/** Connections the server has accepted since it started (ours is one of them already). */
async function connectionsReceived(redis: Redis): Promise<number> {
  const stats = await redis.info('stats');
  return Number(/total_connections_received:(\d+)/.exec(stats)?.[1]);
}

function runJest(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  // A child Jest of its own: none of this run's variables (its Redis, its emulator, its worker id).
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const name of [
    'JEST_WORKER_ID',
    'SQS_ENDPOINT',
    'TEST_RUN_DIR',
    'TEST_RUN_ID',
    'TEST_NOT_RUN_DIR',
    'TEST_REDIS_MISSING',
  ]) {
    delete childEnv[name];
  }
  return new Promise((resolve, reject) => {
    const child = killOnExit(
      spawn(process.execPath, [join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), '--ci', ...args], {
        cwd: ROOT,
        env: childEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}
