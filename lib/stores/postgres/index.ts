/**
 * `nestjs-idempotent-sqs/postgres`: the PostgreSQL store, over `pg` (loaded only when the store creates its pool).
 *
 * @example
 * ```ts
 * // One store per app: the factory runs for each (tests' apps too); the store closes with its app.
 * IdempotencyModule.forRootAsync({
 *   useFactory: () => ({ store: new PostgresIdempotencyStore(process.env.DATABASE_URL!), service: 'orders' }),
 * });
 * ```
 *
 * @module nestjs-idempotent-sqs/postgres
 */
export { PostgresIdempotencyStore, POSTGRES_MAX_TTL_MS } from './postgres-idempotency.store';
export type { PostgresIdempotencyStoreOptions } from './postgres-idempotency.store';
export type { PostgresSweeperOptions } from './postgres-expired-rows.sweeper';
export { createIdempotencyTable, idempotencyTableDdl } from './postgres-idempotency.schema';
export type { PostgresIdempotencyTableOptions } from './postgres-idempotency.schema';
export type { PgPoolOptions, PgQueryable, PgQueryConfig, PgQueryResult } from './postgres-client.interface';
export { pgTransactions } from './postgres-transactions';
export type { PgTransactionClient, PgTransactionPool, PostgresTransactions } from './postgres-transactions';
export { typeOrmTransactions } from './typeorm-transactions';
export type {
  TypeOrmDataSourceLike,
  TypeOrmEntityManagerLike,
  TypeOrmQueryRunnerLike,
} from './typeorm-transactions';
