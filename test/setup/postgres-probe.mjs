// Finds the PostgreSQL the e2e specs use, once per `npm test` (called by the global setup):
// PG_URL, else DATABASE_URL, else the local server (127.0.0.1:5432, user postgres). Each spec then
// creates its own database there and drops it (test/support/postgres-database.ts).
// Found: POSTGRES_ADMIN_URL is set for the Jest workers. Not found: TEST_POSTGRES_MISSING says why,
// and the Postgres specs are skipped and listed at the end of the run, or fail under
// REQUIRE_ALL_CHECKS=1 (CI, where .ci/run starts or installs PostgreSQL): test/support/prerequisites.ts.
import pg from 'pg';

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export async function probePostgres() {
  delete process.env.POSTGRES_ADMIN_URL;
  delete process.env.TEST_POSTGRES_MISSING;
  const url = process.env.PG_URL || process.env.DATABASE_URL || DEFAULT_URL;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    process.env.POSTGRES_ADMIN_URL = url;
  } catch (error) {
    const shown = url.replace(/\/\/([^:@/]*)(:[^@/]*)?@/, '//$1@');
    process.env.TEST_POSTGRES_MISSING = `no PostgreSQL answers at ${shown} (${error.message})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}
