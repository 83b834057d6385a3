/**
 * `nestjs-idempotent-sqs/stores`: the store protocol, for a store of your own (`IdempotencyStore`,
 * `AcquireResult`, the types of its optional parts); prove it with `describeIdempotencyStore` of `/testing`.
 *
 * @module nestjs-idempotent-sqs/stores
 */
export { AcquireResult, IdempotencyStore } from './idempotency-store.interface';
export type {
  AcquireAnswer,
  BatchClaim,
  BatchCompletion,
  FingerprintClaim,
  FingerprintedAcquireAnswer,
  IdempotencyKeyInspection,
  IdempotencyStoreWarning,
  TransactionalClaim,
  TransactionalBatchRun,
  TransactionalRunAnswer,
} from './idempotency-store.interface';
export { IdempotencyStoreUnavailableError } from './idempotency-store.errors';
export { IdempotencyStoreClosedError } from './connection-refusals';
export type { InMemoryIdempotencyStoreOptions } from './in-memory/in-memory-idempotency.store';
