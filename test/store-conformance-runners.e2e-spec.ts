import { execFile } from 'node:child_process';
import { join } from 'node:path';

/**
 * The conformance kit is runner-neutral: here it runs under node:test (no Jest globals, no
 * `expect`, no `jest.fn`), with the runner's functions injected, against the in-memory store and
 * Redis. Vitest is the same situation (globals, or `runner: { describe, it, beforeEach, afterEach }`).
 */
describe('describeIdempotencyStore outside Jest', () => {
  it('runs every case under node:test and reports them passed', async () => {
    const file = join(__dirname, 'fixtures', 'store-conformance.node-test.ts');
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--require', 'ts-node/register/transpile-only', '--test', '--test-reporter=tap', file],
        { cwd: join(__dirname, '..'), env: process.env, timeout: 60_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
      );
    });
    expect(output).toMatch(/^# fail 0$/m);
    expect(output).toMatch(/^# pass 40$/m);
    expect(output).toMatch(/RedisIdempotencyStore under node:test/);
    expect(code).toBe(0);
  }, 90_000);
});
