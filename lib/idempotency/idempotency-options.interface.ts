import type { Type } from '@nestjs/common';
import type { IdempotencyStore } from '../stores/idempotency-store.interface';
import type { PayloadFingerprintOption } from './payload-fingerprint';
import type { ServiceIdentity } from './service-identity';
import type { TtlLimits } from './ttl-limits';

/**
 * Computes the idempotency key from the event (as the handler receives it) and the host's context
 * (an `SqsContext` for SQS handlers, the transport's context for `@EventPattern` handlers).
 * Return a non-empty string or a finite number; anything else counts as a missing key.
 */
export type IdempotencyKeyFunction = (payload: any, context: any) => unknown;

/** What to do when the store fails (network, timeout, outage). */
export type StoreErrorPolicy =
  /** Default: the record fails and is redelivered; the handler never runs unclaimed. */
  | 'fail'
  /** Run the handler without dedup and log it: availability over exactly-once. */
  | 'process';

/**
 * How keys are claimed: every option of `IdempotencyModule.forRoot()` but the counters' (`stats`).
 * Every duration is in milliseconds (Nest convention).
 */
export interface IdempotencyClaimOptions {
  /**
   * The store: an instance, or an `@Injectable()` class that Nest instantiates with its own
   * dependencies (resolved from the module's `imports` and global modules).
   * Default: an `InMemoryIdempotencyStore`.
   */
  store?: IdempotencyStore | Type<IdempotencyStore>;
  /**
   * Dot path of the key in the payload. Default `'id'` (the CloudEvents `id`); with neither
   * `keyPath` nor `key` set, an event that came in an envelope naming its id (EventBridge,
   * CloudEvents, S3) is keyed by that id (`ctx.envelopeKey`).
   */
  keyPath?: string;
  /** Computes the key instead of `keyPath`. */
  key?: IdempotencyKeyFunction;
  /**
   * The service this app is, kept in every store key: two services consuming the same events on one
   * shared store (Redis, DynamoDB, Postgres) each run their handlers once, instead of the second one
   * acking every event as a duplicate of the first one's.
   *
   * Default: the `AWS_LAMBDA_FUNCTION_NAME` environment variable (set by Lambda), else
   * `OTEL_SERVICE_NAME`. With a shared store and neither set, the app does not start
   * (`IdempotencyConfigurationError`). Instances (and Lambda and polling hosts) of one service give
   * the same value so they share dedup; so do apps that must share keys on purpose. `false`: no
   * service segment (`<keyPrefix>:<scope>:<key>`, the 0.1 layout), keys shared with every app on the
   * store that uses the same `keyPrefix`.
   */
  service?: string | false;
  /**
   * How long a completed key is remembered: how late a duplicate may arrive. Default 24 h;
   * `Infinity` = forever. At most 2^53 - 1 ms, or the store's `maxTtlMs`: checked at bootstrap.
   */
  ttl?: number;
  /**
   * The in-progress lease: a claim whose worker died is freed after this long. Must exceed the
   * worst-case handler time (or use `heartbeat`). Default 5 min. At most 2^31 - 1 ms (about 24.8
   * days, the longest Node timer), or the store's `maxTtlMs`: checked at bootstrap.
   */
  inProgressTtl?: number;
  /** A payload without a key fails (default `true`); `false` processes it without dedup. */
  requireKey?: boolean;
  /**
   * First segment of every store key: `<keyPrefix>:<service>:<scope or event type>:<key>`, each
   * segment escaped (`%`, `:` and, outside the prefix, `{` `}` are percent-encoded), so no two
   * services, scopes or keys share a store key. A `{tag}` in the prefix stays a Redis Cluster hash
   * tag. Default `'idempotency'`.
   */
  keyPrefix?: string;
  /**
   * Extend the lease every third of `inProgressTtl` while the handler runs (stores with `extend`).
   * Default `false`.
   */
  heartbeat?: boolean;
  /** What to do when the store fails. Default `'fail'` (fail closed). */
  onStoreError?: StoreErrorPolicy;
  /**
   * Payload fingerprints for every `@Idempotent()` handler (each may override it, or turn it off with
   * `fingerprint: false`): a hash of the event (`true` or `'event'`), of chosen fields (an array of
   * dot paths) or of what a function returns, kept with the claim. A later message with the same key
   * and another fingerprint fails with `IdempotencyFingerprintMismatchError` (not run, not acked as a
   * duplicate; it reaches the dead-letter queue). Needs a store with `tryAcquireWithFingerprint` (the
   * shipped stores have it): checked at bootstrap. Default: none.
   */
  fingerprint?: PayloadFingerprintOption | false;
}

/** Options of `@Idempotent()`; each overrides the module's option of the same name. */
export interface IdempotentOptions {
  keyPath?: string;
  key?: IdempotencyKeyFunction;
  ttl?: number;
  inProgressTtl?: number;
  requireKey?: boolean;
  /**
   * The dedup namespace. Default: the handler's event type. Two idempotent handlers of one event
   * type need distinct scopes, or the second would see the first one's keys as duplicates.
   */
  scope?: string;
  /**
   * Payload fingerprints for this handler (see `IdempotencyClaimOptions.fingerprint`); `false` turns
   * off the module's.
   */
  fingerprint?: PayloadFingerprintOption | false;
  /**
   * Run the handler inside the store's database transaction (a transactional handler): the claim is
   * taken in it, the handler writes through it (`@IdempotencyTransaction()`, or
   * `ctx.state.transaction`), and the completion commits with those writes. A handler that throws
   * rolls back its writes and its claim together; a `SkipMessageException` commits the completion
   * only. A copy arriving while the transaction is open answers `IN_PROGRESS` at once. Needs a store
   * with `runInTransaction` (`PostgresIdempotencyStore` on a pool or a transactions adapter), and
   * cannot be combined with `heartbeat` or `fingerprint`: checked at bootstrap. `inProgressTtl` is
   * how long the transaction may sit idle before the database ends it. Default `false`.
   */
  transactional?: boolean;
}

/** Module options with every default applied. */
export interface ResolvedIdempotencyOptions {
  keyPath: string;
  key?: IdempotencyKeyFunction;
  /** Neither `keyPath` nor `key` was given: the key is an envelope's id, else the payload's `id`. */
  defaultKeySource?: boolean;
  ttl: number;
  inProgressTtl: number;
  requireKey: boolean;
  keyPrefix: string;
  heartbeat: boolean;
  onStoreError: StoreErrorPolicy;
  /** The module's payload fingerprint option, checked (`undefined`: none). */
  fingerprint?: PayloadFingerprintOption;
  /** The store as the options' checks need it: its name for errors, and whether it keeps fingerprints. */
  store: { name: string; keepsFingerprints: boolean; runsTransactions?: boolean };
  /** The service segment of store keys (`undefined`: none) and where it came from. */
  identity: ServiceIdentity;
  /** The largest TTLs the library and the store accept. */
  limits: TtlLimits;
}

export const IDEMPOTENCY_DEFAULTS = {
  keyPath: 'id',
  ttl: 86_400_000,
  inProgressTtl: 300_000,
  requireKey: true,
  keyPrefix: 'idempotency',
  heartbeat: false,
  onStoreError: 'fail',
} as const satisfies Omit<ResolvedIdempotencyOptions, 'key' | 'identity' | 'limits' | 'store'>;
