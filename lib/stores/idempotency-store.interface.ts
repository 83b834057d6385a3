/**
 * The store protocol: structural, three required methods and optional parts. The module trusts no
 * answer (any misbehaviour is a store error for one record). Atomicity is the store's job: two
 * concurrent `tryAcquire`s of a key never both get `ACQUIRED`; fencing on `token` is recommended, so
 * a worker whose lease expired cannot clobber the next owner.
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
  /** Atomically claims `key` for `ttlMs` (the in-progress lease) for the attempt `token`. */
  tryAcquire(key: string, ttlMs: number, token: string): Promise<AcquireResult>;
  /**
   * With `claim` (the module passes one only to a store that `keepsFingerprints`): the claim also keeps
   * its payload fingerprint and message id with the key, in the same atomic step, through its
   * completion; a key already held answers what its claim kept, `{ result, fingerprint?, messageId? }`
   * (a bare result when it kept none, or when this claim won). The module compares the fingerprints.
   */
  tryAcquire(key: string, ttlMs: number, token: string, claim?: FingerprintClaim): Promise<AcquireAnswer>;
  /** Whether `tryAcquire` keeps a `claim`'s fingerprint and answers the held one: payload fingerprints need it. */
  readonly keepsFingerprints?: boolean;
  /** Marks `key` completed for `ttlMs` (`Infinity`: forever); `false` when another attempt took the claim. */
  markComplete(key: string, ttlMs: number, token: string): Promise<boolean | void>;
  /** Releases the claim, so a redelivery runs again; `false` when another attempt took the claim. */
  forget(key: string, token: string): Promise<boolean | void>;
  /** Optional lease heartbeat: pushes the in-progress expiry to `ttlMs` from now while `token` owns it. */
  extend?(key: string, ttlMs: number, token: string): Promise<boolean>;
  /**
   * Optional, read-only, for the Center's key lookup: `IN_PROGRESS` with the lease left, `COMPLETED`
   * with the time left (none for `Infinity`), else `UNKNOWN`. Must never write.
   */
  inspect?(key: string): Promise<IdempotencyKeyInspection>;
  /**
   * Optional: `tryAcquire` for each claim, answered in order, in one round trip where the backend
   * allows. Each key is decided and fenced as alone (the batch is no transaction); a key given twice
   * is claimed once (the second answers `IN_PROGRESS`); `[]` for `[]`.
   */
  tryAcquireMany?(claims: readonly BatchClaim[]): Promise<AcquireResult[]>;
  /**
   * Optional: `markComplete` for each completion, in order (`false`: the claim was lost), fenced as
   * alone; a key given twice completes once; `[]` for `[]`.
   */
  markCompleteMany?(completions: readonly BatchCompletion[]): Promise<boolean[]>;
  /**
   * Optional: one database transaction that claims `claim.key` and, when won, runs `run` with the
   * transaction: resolving commits the completion with the handler's writes, a rejection rolls both
   * back, a `SkipMessageException` commits the completion alone. A key another open transaction holds
   * answers `IN_PROGRESS` at once. Without `claim`, `run` gets a transaction and nothing is claimed.
   */
  runInTransaction?<T>(
    claim: TransactionalClaim | undefined,
    run: (transaction: unknown) => Promise<T>,
  ): Promise<TransactionalRunAnswer<T>>;
  /**
   * Optional: one database transaction for a batch handler's call (`@SqsBatchHandler()` with
   * `@Idempotent({ transactional: true })`): claims each `claims[i].key` as `runInTransaction` claims one,
   * then runs `run` with the transaction and the answers, in order. `run` resolves to its result and the
   * indices of the won claims whose events failed: their completions are removed, and the rest commit with
   * the handler's writes. A rejection rolls everything back; a `SkipMessageException` commits the won
   * completions alone, then rejects with it. `run` is called whatever the answers (for keyless events).
   */
  runBatchInTransaction?<T>(
    claims: readonly TransactionalClaim[],
    run: (transaction: unknown, answers: readonly AcquireResult[]) => Promise<TransactionalBatchRun<T>>,
  ): Promise<T>;
  /**
   * Whether other processes share this store's keys (`undefined` counts as shared): a shared store
   * needs a service identity, or two services would take each other's claims for duplicates.
   */
  readonly shared?: boolean;
  /** The longest finite TTL the store keeps, if it has a limit; larger ones are refused at start-up. */
  readonly maxTtlMs?: number;
  /** The longest store key in UTF-8 bytes, if limited; every handler's longest key is checked at start-up. */
  readonly maxKeyBytes?: number;
  /** What the store found risky about its backend (a Redis that evicts keys), logged once and shown by the Center. */
  readonly warnings?: readonly IdempotencyStoreWarning[];
}

/** What `runInTransaction` did: ran and committed (`result` is `run`'s), or answered without running. */
export type TransactionalRunAnswer<T> =
  | { readonly answer: AcquireResult.ACQUIRED; readonly result: T }
  | { readonly answer: AcquireResult.COMPLETED | AcquireResult.IN_PROGRESS };

/** What a batch handler's transactional run resolves to (`runBatchInTransaction`). */
export interface TransactionalBatchRun<T> {
  readonly result: T;
  /** Indices (into the claims) of won claims whose events failed: not completed, so they run again. */
  readonly release: readonly number[];
}

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

/** The claim a transactional run makes (`runInTransaction`): a completion, written when the transaction commits. */
export interface TransactionalClaim extends BatchCompletion {
  /** How long the transaction may sit idle before the database ends it: the lease of the other stores. */
  readonly idleTimeoutMs: number;
}

/** What a claim with a fingerprint keeps beside the key (`tryAcquire`'s `claim`). */
export interface FingerprintClaim {
  /** The payload's fingerprint: a non-empty string without spaces. */
  readonly fingerprint: string;
  /** The id of the message making the claim, when the host knows it: named by a later mismatch. */
  readonly messageId?: string;
}

/** What `tryAcquire` with a `claim` found the key held by. */
export interface FingerprintedAcquireAnswer {
  /** As `tryAcquire` answers without a claim. */
  readonly result: AcquireResult;
  /** The fingerprint the holding claim kept (`COMPLETED`, `IN_PROGRESS`); absent when none, and nothing is compared. */
  readonly fingerprint?: string;
  /** The message id kept with that fingerprint, when there was one. */
  readonly messageId?: string;
}

/** What `tryAcquire` answers: the result, or for a claim with a fingerprint, what the holding claim kept. */
export type AcquireAnswer = AcquireResult | FingerprintedAcquireAnswer;

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
 * The store's DI token (an interface and a same-named Symbol, as `@nestjs/throttler` does):
 * `@Inject(IdempotencyStore) private readonly store: IdempotencyStore`.
 */
export const IdempotencyStore = Symbol('IdempotencyStore');

/** Whether `store` must be treated as shared between processes (it says so, or does not say). */
export function isSharedStore(store: Pick<IdempotencyStore, 'shared'>): boolean {
  return store.shared !== false;
}

/** Whether `store` keeps payload fingerprints (says `keepsFingerprints: true`). */
export function keepsFingerprints(store: Pick<IdempotencyStore, 'keepsFingerprints'>): boolean {
  return store.keepsFingerprints === true;
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
