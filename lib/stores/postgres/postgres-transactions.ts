import type { PgQueryable, PgQueryConfig, PgQueryResult } from './postgres-client.interface';

/**
 * How the store opens transactional handlers' transactions: an adapter between `pg`'s `query` and
 * what the handler writes through, also the store's `PgQueryable`. `pgTransactions` and
 * `typeOrmTransactions` ship; another ORM is an object with these two methods.
 */
export interface PostgresTransactions<Tx = unknown> extends PgQueryable {
  /**
   * Runs `work` in a transaction (`tx` for the handler, `db` for the store), committing when it resolves;
   * must reject when the commit did not happen (also a `COMMIT` answered `ROLLBACK`).
   */
  transaction<T>(work: (tx: Tx, db: PgQueryable) => Promise<T>): Promise<T>;
}

/** The connection `pg`'s `Pool.connect()` lends: a `PoolClient`, as far as the store uses it. */
export interface PgTransactionClient extends PgQueryable {
  /** Gives the connection back; with an error, the pool discards it instead of reusing it. */
  release(error?: Error | boolean): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}

/** A `pg` `Pool`, as far as transactions need it. */
export interface PgTransactionPool<
  Client extends PgTransactionClient = PgTransactionClient,
> extends PgQueryable {
  connect(): Promise<Client>;
}

/**
 * Transactions on a `pg` `Pool`: the handler gets the transaction's `PoolClient`.
 *
 * @example
 * ```ts
 * const store = new PostgresIdempotencyStore(pgTransactions(pool));
 * ```
 */
export function pgTransactions<Client extends PgTransactionClient>(
  pool: PgTransactionPool<Client>,
): PostgresTransactions<Client> & { readonly pool: PgTransactionPool<Client> } {
  return {
    /** The pool itself: the store listens to its events (a broken idle connection, a new one). */
    pool,
    query: <Row>(config: PgQueryConfig) => pool.query<Row>(config),
    async transaction<T>(work: (tx: Client, db: PgQueryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      // A checked-out client has no error listener of the pool's: one that the server terminates
      // (the idle timeout, an admin) would otherwise crash the process. Its next query rejects.
      let broken: Error | undefined;
      let rolledBack = false;
      const onError = (error: Error) => (broken = error);
      client.on('error', onError);
      try {
        await client.query({ text: 'BEGIN' });
        let result: T;
        try {
          result = await work(client, client);
        } catch (error) {
          await client.query({ text: 'ROLLBACK' }).then(
            () => (rolledBack = true),
            (rollbackFailed: Error) => (broken ??= rollbackFailed),
          );
          throw error;
        }
        const committed = (await client.query({ text: 'COMMIT' })) as PgQueryResult & { command?: string };
        // A transaction in which a statement failed answers COMMIT with ROLLBACK, not an error.
        if (committed.command !== undefined && committed.command !== 'COMMIT') {
          throw new Error(
            `the transaction was rolled back at COMMIT (the server answered ${committed.command}): ` +
              'a statement inside it had failed.',
          );
        }
        return result;
      } catch (error) {
        // A handler's error after a clean ROLLBACK leaves a healthy connection; anything else may not.
        if (!rolledBack) broken ??= error instanceof Error ? error : new Error(String(error));
        throw error;
      } finally {
        client.removeListener('error', onError);
        // After any failure the connection's state is unknown: the pool discards it.
        client.release(broken);
      }
    },
  };
}
