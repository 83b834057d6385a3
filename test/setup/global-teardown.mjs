import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import report from './not-run-report.js';

export default async function globalTeardown() {
  await globalThis.__FAUXQS__?.stop();
  await globalThis.__REDIS__?.stop();
  killListedChildren();
  await dropRunDatabases();
  const dir = process.env.TEST_NOT_RUN_DIR;
  if (!dir) return;
  // Jest has printed its summary by now: this comes last, where a reader looks.
  const lines = report.notRunReport(dir);
  if (lines.length > 0) process.stderr.write(`${lines.join('\n')}\n`);
  rmSync(dir, { recursive: true, force: true });
}

/** The servers and workers a spec started and could not stop (test/support/kill-on-exit.js). */
function killListedChildren() {
  const dir = process.env.TEST_RUN_DIR && join(process.env.TEST_RUN_DIR, 'children');
  let pids = [];
  try {
    pids = readdirSync(dir).map(Number);
  } catch {
    return;
  }
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** The databases of this run a spec could not drop (test/support/postgres-database.ts). */
async function dropRunDatabases() {
  const url = process.env.POSTGRES_ADMIN_URL;
  const runId = process.env.TEST_RUN_ID;
  if (!url || !runId) return;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    const { rows } = await client.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [
      `nis\\_${runId}\\_%`,
    ]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } catch (error) {
    process.stderr.write(`Could not drop this run's test databases: ${error.message}\n`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
