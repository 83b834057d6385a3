/** What the store needs of node-postgres, structurally, so apps compile without `pg`. */

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

/** Runs a statement: a `Pool`, or a `PoolClient`/`Client` inside whatever transaction it has open. */
export interface PgQueryable {
  query<Row = any>(config: PgQueryConfig): Promise<PgQueryResult<Row>>;
}

/** `pg` `Pool` options (untyped here, so `pg` stays optional). */
export type PgPoolOptions = Record<string, any>;
