import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { killOnExit } from './support/kill-on-exit';
import { freePort } from './support/redis-server';

/** The demos this spec started: killed in `afterAll` should a test end before its demo does. */
const demos = new Set<ChildProcess>();

/** Runs `npm start`'s launcher as a user would (no SQS_ENDPOINT: it embeds its own fauxqs). */
function runDemo(
  args: string[],
  extraEnv: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  const env = { ...process.env };
  delete env.SQS_ENDPOINT;
  delete env.REDIS_URL;
  Object.assign(env, extraEnv);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(__dirname, '..', 'sample', 'start.mjs'), ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    killOnExit(child);
    demos.add(child);
    child.once('exit', () => demos.delete(child));
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('the demo (npm start)', () => {
  // Both runs start at once: the spec waits for the slower one instead of the two in a row.
  let safe: ReturnType<typeof runDemo>;
  let unsafe: ReturnType<typeof runDemo>;
  beforeAll(() => {
    safe = runDemo(['--orders', '20', '--workers', '2']);
    unsafe = runDemo(['--orders', '10', '--workers', '2', '--unsafe']);
  });
  afterAll(() => {
    for (const child of demos) child.kill('SIGKILL');
  });

  it('ships every order exactly once through every kind of duplicate, and exits 0', async () => {
    const { code, output } = await safe;
    expect(output).toContain('queue: embedded fauxqs at http://127.0.0.1:');
    expect(output).toMatch(/events \(distinct orders\)\s+20\n/);
    expect(output).toMatch(/handled once\s+20\n/);
    // Each kind of duplicate happened, and each was caught.
    expect(Number(/concurrent copies \(same batch\)\s+(\d+)/.exec(output)?.[1])).toBeGreaterThan(0);
    expect(Number(/producer retries \(new messageId\)\s+(\d+)/.exec(output)?.[1])).toBeGreaterThan(0);
    expect(Number(/duplicates acked, handler not run\s+(\d+)/.exec(output)?.[1])).toBeGreaterThan(0);
    expect(Number(/in-flight duplicates redelivered\s+(\d+)/.exec(output)?.[1])).toBeGreaterThan(0);
    expect(Number(/failures \(redelivered, retried\)\s+(\d+)/.exec(output)?.[1])).toBeGreaterThan(0);
    expect(output).toMatch(/dead-lettered\s+0\n/);
    expect(output).toContain('✔ every order shipped exactly once (20 of 20)');
    expect(code).toBe(0);
  }, 60_000);

  it('on a Redis that is not there, stops at once, names Redis and its address, and exits 2', async () => {
    const port = await freePort(); // nothing listens there
    const { code, output } = await runDemo(['--orders', '5'], { REDIS_URL: `redis://127.0.0.1:${port}` });
    expect(output).toContain(
      `The demo could not run: RedisIdempotencyStore could not reach Redis at redis://127.0.0.1:${port} at start-up ` +
        `(connect ECONNREFUSED 127.0.0.1:${port})`,
    );
    expect(output).toContain('or run the demo without REDIS_URL (the in-memory store)');
    expect(output).not.toMatch(/Unhandled error event|never shipped/);
    expect(code).toBe(2);
  }, 60_000);

  it('exits 1 and names the orders when they ship twice (the handler without @Idempotent())', async () => {
    const { code, output } = await unsafe;
    expect(output).toMatch(/✘ \d+ order\(s\) shipped more than once \(order-\d+ ×\d+/);
    expect(code).toBe(1);
  }, 60_000);
});
