import { randomBytes } from 'node:crypto';
import { Client, Pool, PoolConfig } from 'pg';

/**
 * A database of its own for a spec, on the PostgreSQL the global setup found (POSTGRES_ADMIN_URL:
 * PG_URL, DATABASE_URL or 127.0.0.1:5432): created with a unique name, dropped (connections
 * included) at the end, so specs running in parallel, and other runs on the same server, never see
 * each other's rows.
 */

/** Why the Postgres specs are skipped (no server outside CI), or undefined when they run. */
export const postgresUnavailable = process.env.POSTGRES_ADMIN_URL
  ? undefined
  : (process.env.POSTGRES_UNAVAILABLE ?? 'the Jest global setup did not run');

/** `describe` when PostgreSQL is reachable; `describe.skip` otherwise (the global setup said why, loudly). */
export const describeWithPostgres: jest.Describe = postgresUnavailable ? describe.skip : describe;

export interface TestDatabase {
  name: string;
  /** A connection string for the database (a pool the store creates itself). */
  url: string;
  /** A new pool on the database, ended by `drop()`. */
  pool(config?: PoolConfig): Pool;
  /** Ends the pools and drops the database, closing what is still connected to it. */
  drop(): Promise<void>;
}

export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const adminUrl = process.env.POSTGRES_ADMIN_URL;
  if (!adminUrl) throw new Error(`no PostgreSQL for the tests: ${postgresUnavailable}`);
  const name = `nis_${label.replace(/\W/g, '_')}_${process.pid}_${randomBytes(4).toString('hex')}`
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
      await admin(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
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
