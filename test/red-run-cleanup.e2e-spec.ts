import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { killOnExit } from './support/kill-on-exit';
import { requires } from './support/prerequisites';
import { waitFor } from './support/wait-for';

const ROOT = join(__dirname, '..');
const withRedis = requires('redis-server');
const withPostgres = requires('postgres');
const withServers = withPostgres.available ? withRedis : withPostgres;

/**
 * A red run leaves nothing behind: a spec whose Jest worker is SIGKILLed after it started a
 * redis-server and created a database (no afterAll, finally or exit handler of its own runs) still
 * has both cleaned up by the run's global teardown.
 */
withServers.describe('a red run', () => {
  it('leaves no redis-server and no database behind', async () => {
    const report = join(mkdtempSync(join(tmpdir(), 'red-run-')), 'left.jsonl');
    const { code, output } = await runChildJest(report);

    expect(code).not.toBe(0);
    const left = readFileSync(report, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { pid: number; database: string });
    expect(left).toHaveLength(1);
    const [{ pid, database }] = left;
    expect(output).toMatch(/killed-worker\.fixture-spec/);
    await waitFor(() => !alive(pid), 30_000, `the left redis-server (pid ${pid}) to be killed`);
    const admin = new Client({ connectionString: process.env.POSTGRES_ADMIN_URL });
    await admin.connect();
    try {
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
      expect(rowCount).toBe(0);
    } finally {
      await admin.end();
    }
  }, 120_000);
});

/** Running: neither gone nor a zombie waiting for init to reap it. */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

function runChildJest(report: string): Promise<{ code: number | null; output: string }> {
  // A child Jest of its own: none of this run's variables (its servers, its run directory).
  const env: NodeJS.ProcessEnv = { ...process.env, RED_RUN_REPORT: report };
  for (const name of ['JEST_WORKER_ID', 'SQS_ENDPOINT', 'TEST_RUN_DIR', 'TEST_RUN_ID', 'TEST_NOT_RUN_DIR']) {
    delete env[name];
  }
  const args = [
    '--ci',
    '--maxWorkers=2',
    '--roots',
    '<rootDir>/test/fixtures/red-run',
    '--testRegex',
    '\\.fixture-spec\\.ts$',
  ];
  return new Promise((resolve, reject) => {
    const child = killOnExit(
      spawn(process.execPath, [join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), ...args], {
        cwd: ROOT,
        env,
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
