// Finds the PostgreSQL the e2e specs use, once per `npm test` (called by the global setup):
// PG_URL, else DATABASE_URL, else the local server (127.0.0.1:5432, user postgres). Each spec then
// creates its own database there and drops it (test/support/postgres-database.ts).
// Found: POSTGRES_ADMIN_URL is set for the Jest workers. Not found: in CI (CI or REQUIRE_ALL_CHECKS=1)
// the run fails, since .ci/run starts or installs PostgreSQL; elsewhere the Postgres specs are
// skipped, loudly.
import pg from 'pg';

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export async function probePostgres() {
  const url = process.env.PG_URL || process.env.DATABASE_URL || DEFAULT_URL;
  const shown = url.replace(/\/\/([^:@/]*)(:[^@/]*)?@/, '//$1@');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    process.env.POSTGRES_ADMIN_URL = url;
  } catch (error) {
    const reason = `PostgreSQL is not reachable at ${shown} (${error.message})`;
    if (process.env.CI || process.env.REQUIRE_ALL_CHECKS === '1') {
      throw new Error(`${reason}. CI needs it: .ci/run starts or installs it; or set PG_URL.`);
    }
    process.env.POSTGRES_UNAVAILABLE = reason;
    process.stderr.write(
      `\n${'!'.repeat(100)}\n!! ${reason}.\n!! The PostgreSQL specs are SKIPPED. Start it ` +
        `(pg_ctlcluster <version> main start) or set PG_URL to run them.\n${'!'.repeat(100)}\n\n`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}
