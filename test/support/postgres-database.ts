import { randomBytes } from 'node:crypto';
import { Client, Pool, PoolConfig } from 'pg';

/**
 * A database of its own for a spec (or the benchmark), on the PostgreSQL the global setup found
 * (POSTGRES_ADMIN_URL: PG_URL, DATABASE_URL or 127.0.0.1:5432): created with a unique name, dropped
 * (connections included) at the end, so specs running in parallel, and other runs on the same
 * server, never see each other's rows.
 */

export interface TestDatabase {
  name: string;
  /** A connection string for the database (a pool the store creates itself). */
  url: string;
  /** A new pool on the database, ended by `drop()`. */
  pool(config?: PoolConfig): Pool;
  /** Ends the pools and drops the database, closing what is still connected to it. */
  drop(): Promise<void>;
}

/**
 * A database for a spec, on the server the global setup found. Gate the spec with
 * `requires('postgres')` (test/support/prerequisites.ts), which skips it where there is none.
 */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const adminUrl = process.env.POSTGRES_ADMIN_URL;
  if (!adminUrl) throw new Error(`no PostgreSQL for the tests: ${process.env.TEST_POSTGRES_MISSING}`);
  return createDatabase(adminUrl, label);
}

/** A database of its own on the server of `adminUrl` (whose role may create databases). */
export async function createDatabase(adminUrl: string, label: string): Promise<TestDatabase> {
  // The run's id first: the global teardown drops this run's databases that a spec left behind.
  const run = process.env.TEST_RUN_ID ?? 'x';
  const name = `nis_${run}_${label.replace(/\W/g, '_')}_${process.pid}_${randomBytes(4).toString('hex')}`
    .toLowerCase()
    .slice(0, 63);
  await admin(adminUrl, `CREATE DATABASE "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const pools: Pool[] = [];
  return {
    name,
    url: url.toString(),
    pool(config = {}) {
      const pool = new Pool({ connectionString: url.toString(), ...config });
      pool.on('error', () => undefined); // a connection closed by drop() while idle
      pools.push(pool);
      return pool;
    },
    async drop() {
      await Promise.all(pools.splice(0).map((pool) => pool.end().catch(() => undefined)));
      await dropDatabase(adminUrl, name);
    },
  };
}

/**
 * Drops `name` once its connections have gone: `pool.end()` resolves as soon as it has asked its
 * connections to close, and a connection the server terminates while closing emits an error that
 * nobody listens to any more. Whatever is still connected after 2 s is terminated (FORCE).
 */
async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const deadline = Date.now() + 2_000;
    const connected = async () =>
      Number(
        (await client.query('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1', [name])).rows[0]
          .n,
      );
    while ((await connected()) > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

async function admin(adminUrl: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
