import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { killOnExit } from './support/kill-on-exit';
import { requires } from './support/prerequisites';

const withRedis = requires('redis-server');

/**
 * The conformance kit is runner-neutral: here it runs under node:test (no Jest globals, no
 * `expect`, no `jest.fn`), with the runner's functions injected, and under Vitest (the runner Nest
 * 12 projects start with) on its globals, against the in-memory store and Redis.
 */
withRedis.describe('describeIdempotencyStore outside Jest', () => {
  it('runs every case under node:test and reports them passed', async () => {
    const file = join(__dirname, 'fixtures', 'store-conformance.node-test.ts');
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--require', 'ts-node/register/transpile-only', '--test', '--test-reporter=tap', file],
        { cwd: join(__dirname, '..'), env: process.env, timeout: 60_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
      );
      killOnExit(child);
    });
    expect(output).toMatch(/^# fail 0$/m);
    // 37 cases of the kit (19, 4 of inspect, 6 of payload fingerprints and 8 of batches) for Redis,
    // 29 for the in-memory store (no batch methods).
    expect(output).toMatch(/^# pass 66$/m);
    expect(output).toMatch(/RedisIdempotencyStore under node:test/);
    expect(code).toBe(0);
  }, 90_000);

  it('runs every case under Vitest and reports them passed', async () => {
    const root = join(__dirname, '..');
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [
          join(root, 'node_modules', 'vitest', 'vitest.mjs'),
          'run',
          '--config',
          'test/fixtures/vitest.config.mts',
        ],
        { cwd: root, env: { ...process.env, NO_COLOR: '1', CI: '1' }, timeout: 90_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
      );
      killOnExit(child);
    });
    expect(output).toMatch(/Tests\s+66 passed \(66\)/);
    expect(output).not.toMatch(/failed/);
    expect(code).toBe(0);
  }, 120_000);
});
