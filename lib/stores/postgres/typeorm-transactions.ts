import { IdempotencyConfigurationError } from '../../common/sqs-idempotency.error';
import type { PgQueryable, PgQueryConfig, PgQueryResult } from './postgres-client.interface';
import type { PostgresTransactions } from './postgres-transactions';

/** The TypeORM a `DataSource` (0.3, 1.x) on `postgres` offers the adapter, structurally. */
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
 * Transactions through a TypeORM `DataSource`: the handler gets the transaction's `EntityManager`,
 * the store's statements run on the same connection.
 *
 * @example
 * ```ts
 * useFactory: (dataSource: DataSource) => ({ store: new PostgresIdempotencyStore(typeOrmTransactions(dataSource)) })
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
          throw new IdempotencyConfigurationError(
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
