/**
 * `nestjs-idempotent-sqs/stores`: the store protocol, for writing a store of your own. A store is
 * any object with `tryAcquire`, `markComplete` and `forget` (`IdempotencyStore`); the optional parts
 * (batch claims, payload fingerprints, transactions, key inspection, warnings) are typed here. The
 * conformance kit that proves a store keeps the contract is `describeIdempotencyStore` on
 * `/testing`; the shipped backends are on `/redis`, `/dynamodb` and `/postgres`.
 */
export { AcquireResult, IdempotencyStore } from './idempotency-store.interface';
export type {
  BatchClaim,
  BatchCompletion,
  FingerprintClaim,
  FingerprintedAcquireAnswer,
  IdempotencyKeyInspection,
  IdempotencyStoreWarning,
  TransactionalClaim,
  TransactionalRunAnswer,
} from './idempotency-store.interface';
export { IdempotencyStoreUnavailableError } from './idempotency-store.errors';
export type { InMemoryIdempotencyStoreOptions } from './in-memory/in-memory-idempotency.store';
