/**
 * What the Postgres store needs from node-postgres, declared structurally: a `Pool`, a `PoolClient`
 * or a `Client` of `pg` satisfies these, and the package's types compile in apps that do not
 * install `pg` (it is an optional peer). Nothing here imports `pg`.
 */

/** A parameterised statement, as `pg`'s `query(config)` takes it. */
export interface PgQueryConfig {
  text: string;
  values?: unknown[];
  /** Prepared-statement name: the server parses and plans the text once per connection. */
  name?: string;
}

/** What a statement answered, as `pg` returns it. */
export interface PgQueryResult<Row = Record<string, unknown>> {
  rows: Row[];
  /** Rows inserted, updated or deleted (`null` for statements that count none). */
  rowCount: number | null;
}

/**
 * Anything that runs a statement: a `Pool` (each statement on a free connection, in its own
 * transaction), or a `PoolClient`/`Client` (on that connection, inside whatever transaction it has
 * open). Every SQL step of the store takes one, so a step can run inside a caller's transaction.
 */
export interface PgQueryable {
  query<Row = any>(config: PgQueryConfig): Promise<PgQueryResult<Row>>;
}

/**
 * `pg` `Pool` options (`connectionString`, `host`, `user`, `ssl`, `max`, ...). Any object: `pg`
 * checks them, and naming its type here would make `pg` a required install.
 */
export type PgPoolOptions = Record<string, any>;
