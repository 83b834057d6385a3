/**
 * The store protocol every backend implements (in-memory, Redis, or a user's DynamoDB/Postgres
 * table). It is structural on purpose: no base class, three required methods; optional are `extend`
 * (the lease heartbeat), `tryAcquireWithFingerprint` (payload fingerprints), `tryAcquireMany` and
 * `markCompleteMany` (a batch's keys in one round trip) and what a store says of itself (`shared`,
 * `maxTtlMs`, `warnings`).
 *
 * The module never trusts an answer: a throw, a rejection, a return that is not a promise, or a value
 * outside the protocol is a store error for the record at hand, never a crashed process.
 *
 * Atomicity is the store's job: two concurrent `tryAcquire` calls for one key must never both get
 * `ACQUIRED`. Fencing is optional but recommended: a store that honours `token` makes
 * `markComplete`, `forget` and `extend` act only while that attempt still owns the key, so a worker
 * whose lease expired cannot clobber the next owner.
 */

/** What `tryAcquire` found. */
export enum AcquireResult {
  /** First sighting (or the previous claim expired): the caller now owns the key and runs the handler. */
  ACQUIRED = 'ACQUIRED',
  /** A finished attempt already handled this key within the dedup window: ack as a duplicate. */
  COMPLETED = 'COMPLETED',
  /** Another attempt holds the lease: fail on purpose so SQS redelivers after the visibility timeout. */
  IN_PROGRESS = 'IN_PROGRESS',
}

/**
 * A deduplication store.
 *
 * @example
 * ```ts
 * class PgIdempotencyStore implements IdempotencyStore {
 *   async tryAcquire(key, ttlMs, token) { ... INSERT ... ON CONFLICT ... }
 *   async markComplete(key, ttlMs, token) { ... UPDATE ... WHERE token = $3 ... }
 *   async forget(key, token) { ... DELETE ... WHERE token = $2 ... }
 * }
 * ```
 */
export interface IdempotencyStore {
  /**
   * Atomically claims `key` for `ttlMs` (the in-progress lease) on behalf of the attempt `token`.
   */
  tryAcquire(key: string, ttlMs: number, token: string): Promise<AcquireResult>;
  /**
   * Marks `key` completed for `ttlMs` (the dedup window; `Infinity` means forever).
   * Returns `false` when the claim was lost to another attempt; `void` counts as success.
   */
  markComplete(key: string, ttlMs: number, token: string): Promise<boolean | void>;
  /**
   * Releases the claim so a redelivery can run the handler again.
   * Returns `false` when the claim was lost to another attempt; `void` counts as success.
   */
  forget(key: string, token: string): Promise<boolean | void>;
  /** Optional lease heartbeat: pushes the in-progress expiry to `ttlMs` from now while `token` owns it. */
  extend?(key: string, ttlMs: number, token: string): Promise<boolean>;
  /**
   * Optional, read-only: what the store holds for `key` now, for the Idempotency Center's key lookup
   * ("what happened to key X?"). Must never write: no claim, no expiry change, no extension. A live
   * claim answers `IN_PROGRESS` with the lease left, a live completion `COMPLETED` with the time
   * left in its dedup window (none for `ttl: Infinity`), anything else (absent, expired) `UNKNOWN`.
   * Without it, the Center says the lookup is not supported by the store.
   */
  inspect?(key: string): Promise<IdempotencyKeyInspection>;
  /**
   * Optional payload fingerprints: `tryAcquire`, which also keeps `claim` (the payload's fingerprint
   * and the claiming message's id) with the key, and answers what the claim holding the key kept.
   * Atomic as `tryAcquire`, in one round trip. The module calls it instead of `tryAcquire` for
   * handlers with a `fingerprint` option (and refuses that option at bootstrap when the store has
   * no such method); it compares the fingerprints itself.
   *
   * What is kept must survive `markComplete` of the same token, and must not outlive the claim: a
   * key claimed again (after its expiry or release) keeps the new claim's fingerprint, or none when
   * it was claimed by `tryAcquire`.
   */
  tryAcquireWithFingerprint?(
    key: string,
    ttlMs: number,
    token: string,
    claim: FingerprintClaim,
  ): Promise<FingerprintedAcquireAnswer>;
  /**
   * Optional batch claim: `tryAcquire` for every one of `claims` (each with its own key, lease and
   * token), answered in the same order, in one round trip where the backend allows it (one script
   * call on Redis; one per hash slot on a cluster). Each key is decided atomically and fenced exactly
   * as `tryAcquire` decides it; the batch is not a transaction (keys are independent, and a key
   * claimed by another attempt between two of a batch's keys answers as it would alone). A key
   * given twice is claimed once: the first entry is decided first, so the second answers
   * `IN_PROGRESS`. An empty batch answers `[]`. Without it, the module claims key by key.
   *
   * @example
   * ```ts
   * const [first, second] = await store.tryAcquireMany!([
   *   { key: 'orders:e1', ttlMs: 300_000, token: randomUUID() },
   *   { key: 'orders:e2', ttlMs: 300_000, token: randomUUID() },
   * ]);
   * ```
   */
  tryAcquireMany?(claims: readonly BatchClaim[]): Promise<AcquireResult[]>;
  /**
   * Optional batch completion: `markComplete` for every one of `completions`, answered in the same
   * order (`true` completed, `false` the claim was lost to another attempt), in one round trip where
   * the backend allows it. Fenced exactly as `markComplete`: a key held by another attempt or
   * already completed is left alone (`false`); a key whose lease expired with nobody taking it
   * over is completed; a claim's payload fingerprint stays with its completion. The same key given
   * twice: the first entry completes it, the second answers `false`. An empty batch answers `[]`.
   * Without it, the module completes key by key.
   */
  markCompleteMany?(completions: readonly BatchCompletion[]): Promise<boolean[]>;
  /**
   * Optional transactions (transactional handlers, `@Idempotent({ transactional: true })`): opens one
   * database transaction, claims `claim.key` inside it, and, when the claim is won, calls `run` with
   * the transaction the handler writes through. The completion is written by the claim itself and
   * commits with the handler's writes when `run` resolves; a rejection rolls both back; a
   * `SkipMessageException` out of `run` commits the completion only, then is rethrown. A key whose
   * claim another open transaction holds answers `IN_PROGRESS` at once, never after waiting for it.
   * Without `claim` (a keyless message, `requireKey: false`), `run` gets a transaction and no claim
   * is made. `PostgresIdempotencyStore` has it; the module refuses `transactional` handlers on a
   * store without it, at bootstrap.
   */
  runInTransaction?<T>(
    claim: TransactionalClaim | undefined,
    run: (transaction: unknown) => Promise<T>,
  ): Promise<TransactionalRunAnswer<T>>;
  /**
   * Whether other processes read and write this store's keys: `true` for Redis, DynamoDB, Postgres;
   * `false` for the in-memory store. Keys in a shared store must carry the service's identity, or two
   * services consuming one event would take each other's claims for duplicates; so the module refuses
   * to start with a shared store and no service identity (the `service` option). A store that leaves
   * this `undefined` is treated as shared: declare `false` only when the data lives in this process.
   */
  readonly shared?: boolean;
  /**
   * The longest finite TTL (`ttl` and `inProgressTtl`, in milliseconds) the store can keep, when it has
   * a limit of its own; larger values are refused at start-up with a sentence naming it. `ttl: Infinity`
   * (remember forever) is not a finite TTL and is always accepted.
   */
  readonly maxTtlMs?: number;
  /**
   * The longest store key, in UTF-8 bytes, the backend can keep, when it has a limit (a Postgres
   * index row, a DynamoDB partition key). At start-up the module checks the longest key each handler
   * can build (`<keyPrefix>:<service>:<scope>:` and a key of up to 600 bytes) against it, and refuses
   * to start, naming the option to shorten, rather than fail every record on its key.
   */
  readonly maxKeyBytes?: number;
  /**
   * What the store found risky about its backing service (for instance a Redis that evicts keys or
   * keeps no data over a restart), each also logged once. Read-only; the Idempotency Center shows it.
   */
  readonly warnings?: readonly IdempotencyStoreWarning[];
}

/** The claim a transactional run makes (`runInTransaction`). */
export interface TransactionalClaim {
  readonly key: string;
  /** How long the completion is kept (the dedup window); `Infinity`: forever. */
  readonly ttlMs: number;
  /** The attempt's token, kept in the row. */
  readonly token: string;
  /**
   * The longest the transaction may sit idle (the handler holding it open without a statement)
   * before the database ends it, rolling back the claim: what the lease is for the other stores.
   */
  readonly idleTimeoutMs: number;
}

/** What `runInTransaction` did: ran and committed (`result` is `run`'s), or answered without running. */
export type TransactionalRunAnswer<T> =
  | { readonly answer: AcquireResult.ACQUIRED; readonly result: T }
  | { readonly answer: AcquireResult.COMPLETED | AcquireResult.IN_PROGRESS };

/** What a store holds for one key (`inspect`), read without writing. */
export type IdempotencyKeyInspection =
  /** Completed within its dedup window: a delivery now is acked as a duplicate. */
  | {
      readonly state: 'COMPLETED';
      /** Time left in the dedup window; absent: kept forever. */ readonly expiresInMs?: number;
    }
  /** Claimed by an attempt that has not settled: a delivery now fails and is redelivered. */
  | {
      readonly state: 'IN_PROGRESS';
      /** Time left on the lease; absent: no expiry. */ readonly leaseLeftMs?: number;
    }
  /** Nothing live: never seen, released after a failure, or past its lease or dedup window. */
  | { readonly state: 'UNKNOWN' };

/** One key of a batch claim (`tryAcquireMany`): the arguments of one `tryAcquire`. */
export interface BatchClaim {
  readonly key: string;
  /** The in-progress lease, in milliseconds. */
  readonly ttlMs: number;
  /** The attempt's token (fencing). */
  readonly token: string;
}

/** One key of a batch completion (`markCompleteMany`): the arguments of one `markComplete`. */
export interface BatchCompletion {
  readonly key: string;
  /** The dedup window, in milliseconds; `Infinity` keeps the key forever. */
  readonly ttlMs: number;
  /** The token of the attempt that claimed the key. */
  readonly token: string;
}

/** What a claim with a fingerprint keeps beside the key (`tryAcquireWithFingerprint`). */
export interface FingerprintClaim {
  /**
   * The payload's fingerprint: a non-empty string without spaces (the module's are 16 characters of
   * base64url).
   */
  readonly fingerprint: string;
  /** The id of the message making the claim, when the host knows it: named by a later mismatch. */
  readonly messageId?: string;
}

/** What `tryAcquireWithFingerprint` found. */
export interface FingerprintedAcquireAnswer {
  /** As `tryAcquire` answers. */
  readonly result: AcquireResult;
  /**
   * With `COMPLETED` and `IN_PROGRESS`: the fingerprint the claim holding the key kept; absent when
   * it kept none (it was claimed by `tryAcquire`), and then nothing is compared.
   */
  readonly fingerprint?: string;
  /** The message id kept with that fingerprint, when there was one. */
  readonly messageId?: string;
}

/** The answer to a claim that won: nothing to compare. Shared, never mutated. */
export const ACQUIRED_WITH_FINGERPRINT: FingerprintedAcquireAnswer = Object.freeze({
  result: AcquireResult.ACQUIRED,
});

/** Something about a store's backing service that can make dedup forget keys early. */
export interface IdempotencyStoreWarning {
  /** Stable identifier, e.g. `'redis.maxmemory-policy'`. */
  readonly code: string;
  /** The setting as found, e.g. `'maxmemory-policy allkeys-lru'`. */
  readonly setting: string;
  /** What it means for dedup and what to change. */
  readonly message: string;
}

/**
 * DI token of the store (an interface and a same-named Symbol, as `@nestjs/throttler` does).
 *
 * @example
 * ```ts
 * constructor(@Inject(IdempotencyStore) private readonly store: IdempotencyStore) {}
 * ```
 */
export const IdempotencyStore = Symbol('IdempotencyStore');

/** Whether `store` must be treated as shared between processes (it says so, or does not say). */
export function isSharedStore(store: Pick<IdempotencyStore, 'shared'>): boolean {
  return store.shared !== false;
}

/** Whether `store` keeps payload fingerprints (has `tryAcquireWithFingerprint`). */
export function keepsFingerprints(store: Pick<IdempotencyStore, 'tryAcquireWithFingerprint'>): boolean {
  return typeof store.tryAcquireWithFingerprint === 'function';
}

/** Whether `store` claims and completes a batch's keys at once (has both batch methods). */
export function handlesBatches(
  store: Pick<IdempotencyStore, 'tryAcquireMany' | 'markCompleteMany'>,
): boolean {
  return typeof store.tryAcquireMany === 'function' && typeof store.markCompleteMany === 'function';
}

/** Says which of the required store methods `candidate` lacks (empty when it is a usable store). */
export function missingStoreMethods(candidate: unknown): string[] {
  const required = ['tryAcquire', 'markComplete', 'forget'] as const;
  if (candidate === null || typeof candidate !== 'object') return [...required];
  return required.filter((name) => typeof (candidate as Record<string, unknown>)[name] !== 'function');
}

/** Whether `store` runs transactional handlers (has `runInTransaction`). */
export function runsTransactions(store: Pick<IdempotencyStore, 'runInTransaction'>): boolean {
  return typeof store.runInTransaction === 'function';
}
