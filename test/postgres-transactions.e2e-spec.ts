import type { Pool, PoolClient } from 'pg';
import { pgTransactions } from '../lib/stores/postgres';
import { createTestDatabase, TestDatabase } from './support/postgres-database';
import { requires } from './support/prerequisites';

/**
 * `pgTransactions(lending as never)`, the transactions of transactional handlers, on a real PostgreSQL: what it
 * answers when the handler fails, when a statement failed and COMMIT rolled back, when the connection
 * breaks; and whether the connection goes back to the pool healthy or is discarded.
 */
const postgres = requires('postgres');

postgres.describe('pgTransactions on PostgreSQL', () => {
  let db: TestDatabase;
  let pool: Pool;
  /** What each transaction's connection was released with (`undefined`: healthy, kept by the pool). */
  let released: unknown[];

  beforeAll(async () => {
    db = await createTestDatabase('transactions');
    const setup = db.pool({ max: 1 });
    await setup.query('CREATE TABLE notes (id text PRIMARY KEY)');
  });
  afterAll(() => db?.drop());

  /** The pool as `pgTransactions` sees it, recording how each lent connection comes back. */
  let lending: { query: Pool['query']; connect(): Promise<PoolClient> };

  beforeEach(() => {
    pool = db.pool({ max: 2 });
    released = [];
    lending = {
      query: pool.query.bind(pool) as Pool['query'],
      async connect() {
        const client = await pool.connect();
        const release = client.release.bind(client);
        client.release = (error?: Error | boolean) => {
          released.push(error);
          release(error);
        };
        return client;
      },
    };
  });

  const notes = async () => (await pool.query('SELECT id FROM notes ORDER BY id')).rows.map((row) => row.id);

  it('commits what the work wrote, and gives the connection back healthy', async () => {
    const transactions = pgTransactions(lending as never);
    expect(
      await transactions.transaction(
        async (tx) => (await tx.query({ text: "INSERT INTO notes VALUES ('a')" })).rowCount,
      ),
    ).toBe(1);
    expect(await notes()).toContain('a');
    expect(released).toEqual([undefined]);
  });

  it('commits with a driver that reports no command for COMMIT (only pg says ROLLBACK there)', async () => {
    // A pg-like driver whose results carry no `command`: the connection lent, seen through it.
    const transactions = pgTransactions({
      query: lending.query,
      async connect() {
        const client = await lending.connect();
        return {
          query: async (config: { text: string }) => {
            const { command: _command, ...result } = await client.query(config);
            return result;
          },
          on: client.on.bind(client),
          removeListener: client.removeListener.bind(client),
          release: client.release.bind(client),
        };
      },
    } as never);
    expect(
      await transactions.transaction(
        async (tx) => (await tx.query({ text: "INSERT INTO notes VALUES ('n')" })).rowCount,
      ),
    ).toBe(1);
    expect(await notes()).toContain('n');
    expect(released).toEqual([undefined]);
  });

  it('rolls back a failing handler, rejects with its error, and keeps the connection (a clean ROLLBACK)', async () => {
    const transactions = pgTransactions(lending as never);
    const failure = new Error('the handler failed');
    await expect(
      transactions.transaction(async (tx) => {
        await tx.query({ text: "INSERT INTO notes VALUES ('b')" });
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await notes()).not.toContain('b');
    expect(released).toEqual([undefined]);
  });

  it('rejects when COMMIT answers ROLLBACK (a statement failed and the work went on), and discards the connection', async () => {
    const transactions = pgTransactions(lending as never);
    const committing = transactions.transaction(async (tx) => {
      await tx.query({ text: "INSERT INTO notes VALUES ('c')" });
      await tx.query({ text: 'SELECT * FROM no_such_table' }).catch(() => undefined); // swallowed by the work
      return 'done';
    });
    await expect(committing).rejects.toThrow(
      'the transaction was rolled back at COMMIT (the server answered ROLLBACK): a statement inside it had failed.',
    );
    expect(await notes()).not.toContain('c');
    expect(released).toEqual([
      expect.objectContaining({ message: expect.stringContaining('rolled back at COMMIT') }),
    ]);
  });

  it('discards a connection the server ended during the work (its ROLLBACK fails), with the error it broke with', async () => {
    const transactions = pgTransactions(lending as never);
    await expect(
      transactions.transaction(async (tx) => {
        const { rows } = await tx.query<{ pid: number }>({ text: 'SELECT pg_backend_pid() AS pid' });
        // An admin (or the idle timeout) ends the connection while the transaction holds it.
        await pool.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
        await tx.query({ text: 'SELECT 1' });
      }),
    ).rejects.toThrow();
    // The error it broke with (pg's own, from another realm than Jest's: checked by shape).
    expect(released).toEqual([expect.objectContaining({ message: expect.any(String) })]);
    // The pool still works: the broken connection was not given to anyone again.
    expect(await notes()).toEqual(expect.any(Array));
  });
});
