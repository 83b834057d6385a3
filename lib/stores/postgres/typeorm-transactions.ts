import type { PgQueryable, PgQueryConfig, PgQueryResult } from './postgres-client.interface';
import type { PostgresTransactions } from './postgres-transactions';

/**
 * TypeORM, as far as the adapter uses it: declared structurally, so the package neither depends on
 * TypeORM nor pins its version. A `DataSource` (0.3 and 1.x) on the `postgres` driver satisfies it.
 *
 * Why TypeORM for the ORM adapter: it is the ORM of Nest's own documentation and of
 * `@nestjs/typeorm`, the most common pairing in Nest apps, and its `EntityManager` is what those
 * handlers already write through, so a handler's code keeps its shape. It runs on `pg` itself (the
 * locks and timeouts are node-postgres's and PostgreSQL's), and `QueryRunner.query(text, values,
 * true)` gives parameterised SQL on the transaction's connection with the affected-row count, all
 * the store needs.
 */
export interface TypeOrmQueryRunnerLike {
  /** With `useStructuredResult` true: `{ records, affected }` (TypeORM's `QueryResult`). */
  query(text: string, values: unknown[] | undefined, useStructuredResult: true): Promise<unknown>;
  release(): Promise<void>;
}

/** A TypeORM `EntityManager` bound to one transaction, as far as the adapter uses it. */
export interface TypeOrmEntityManagerLike {
  readonly queryRunner?: TypeOrmQueryRunnerLike;
}

/** A TypeORM `DataSource`, as far as the adapter uses it. */
export interface TypeOrmDataSourceLike<Manager extends TypeOrmEntityManagerLike = TypeOrmEntityManagerLike> {
  transaction<T>(work: (manager: Manager) => Promise<T>): Promise<T>;
  createQueryRunner(): TypeOrmQueryRunnerLike;
}

/**
 * Transactions through a TypeORM `DataSource` (PostgreSQL driver): the handler gets the
 * transaction's `EntityManager` and writes through it as usual; the store's statements run on the
 * same connection. Statements outside a transaction (non-transactional handlers, the sweeper) go
 * through a query runner of the data source. Prepared statement names are not used (TypeORM does
 * not pass them).
 *
 * @example
 * ```ts
 * IdempotencyModule.forRootAsync({
 *   inject: [DataSource],
 *   useFactory: (dataSource: DataSource) => ({
 *     store: new PostgresIdempotencyStore(typeOrmTransactions(dataSource)),
 *     service: 'orders',
 *   }),
 * });
 * ```
 */
export function typeOrmTransactions<Manager extends TypeOrmEntityManagerLike>(
  dataSource: TypeOrmDataSourceLike<Manager>,
): PostgresTransactions<Manager> {
  return {
    async query<Row>(config: PgQueryConfig): Promise<PgQueryResult<Row>> {
      const runner = dataSource.createQueryRunner();
      try {
        return await structuredQuery<Row>(runner, config);
      } finally {
        await runner.release();
      }
    },
    transaction<T>(work: (tx: Manager, db: PgQueryable) => Promise<T>): Promise<T> {
      return dataSource.transaction(async (manager) => {
        const runner = manager.queryRunner;
        if (runner === undefined) {
          throw new TypeError(
            'typeOrmTransactions: the EntityManager of the transaction has no queryRunner (not a TypeORM DataSource?).',
          );
        }
        return work(manager, { query: (config) => structuredQuery(runner, config) });
      });
    },
  };
}

async function structuredQuery<Row>(
  runner: TypeOrmQueryRunnerLike,
  config: PgQueryConfig,
): Promise<PgQueryResult<Row>> {
  const answer = (await runner.query(config.text, config.values, true)) as {
    records?: Row[];
    affected?: number;
  };
  return { rows: answer.records ?? [], rowCount: answer.affected ?? null };
}
