import type { OptionShape } from '../common/known-options';
import type { Type } from '@nestjs/common';
import type { IdempotencyStore } from '../stores/idempotency-store.interface';
import type { PayloadFingerprinterOf, PayloadFingerprintOption } from './payload-fingerprint';
import type { ServiceIdentity } from './service-identity';
import type { TtlLimits } from './ttl-limits';

/**
 * The key from the event (as the handler receives it) and the host's context (`SqsContext`, or the
 * transport's): a non-empty string, a finite number (an integer only within 2^53), or a bigint (its
 * decimal digits, any size), else the key is missing.
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
  /** An instance, or an `@Injectable()` class Nest instantiates. Default: an `InMemoryIdempotencyStore`. */
  store?: IdempotencyStore | Type<IdempotencyStore>;
  /**
   * Dot path of the key in the payload. Default `'id'`, or the id an envelope names (EventBridge,
   * CloudEvents, S3: `ctx.envelopeKey`) when neither `keyPath` nor `key` is set.
   */
  keyPath?: string;
  /** Computes the key instead of `keyPath`. */
  key?: IdempotencyKeyFunction;
  /**
   * This service's name, kept in every store key, so two services on one shared store each run their
   * handlers once. Default: `AWS_LAMBDA_FUNCTION_NAME`, else `OTEL_SERVICE_NAME`; required with a shared
   * store. `false`: no service segment (keys shared with every app of the same `keyPrefix`).
   */
  service?: string | false;
  /** How late a duplicate may arrive. Default 24 h; `Infinity` = forever; at most 2^53 - 1 or the store's `maxTtlMs`. */
  ttl?: number;
  /**
   * The in-progress lease: a dead worker's claim is freed after it, so it must exceed the worst-case
   * handler time (or use `heartbeat`). Default 5 min; at most 2^31 - 1 (the longest Node timer).
   */
  inProgressTtl?: number;
  /** A payload without a key fails (default `true`); `false` processes it without dedup. */
  requireKey?: boolean;
  /**
   * First segment of every store key `<keyPrefix>:<service>:<scope>:<key>` (segments escaped, so no two
   * share a store key; a `{tag}` stays a Redis Cluster hash tag). Default `'idempotency'`.
   */
  keyPrefix?: string;
  /** Extend the lease every third of `inProgressTtl` while the handler runs (stores with `extend`). Default `false`. */
  heartbeat?: boolean;
  /** What to do when the store fails. Default `'fail'` (fail closed). */
  onStoreError?: StoreErrorPolicy;
  /**
   * Payload fingerprints for every `@Idempotent()` handler: the payload as it arrived (`true`), some
   * fields of it (dot paths) or what a function selects from it is hashed and kept with the claim; the
   * same key with another fingerprint fails with `IdempotencyFingerprintMismatchError`. Needs a store
   * that keeps fingerprints (`keepsFingerprints`).
   */
  fingerprint?: PayloadFingerprintOption | false;
}

/** Options of `@Idempotent()`; each overrides the module's option of the same name. */
export interface IdempotentOptions extends Pick<
  IdempotencyClaimOptions,
  'keyPath' | 'key' | 'ttl' | 'inProgressTtl' | 'requireKey' | 'fingerprint'
> {
  /** The dedup namespace. Default: the event type; two idempotent handlers of one type need distinct scopes. */
  scope?: string;
  /**
   * Run the handler in the store's transaction: the claim, the handler's writes (through
   * `@IdempotencyTransaction()`) and the completion commit together; a throw rolls all back, a skip
   * commits the completion only. Needs a store with `runInTransaction`; not with `heartbeat` or
   * `fingerprint`. Default `false`.
   */
  transactional?: boolean;
}

/** What each claim option takes, for the start-up reading of options (`known-options.ts`). */
export const CLAIM_OPTION_SHAPE: OptionShape<IdempotencyClaimOptions> = {
  store: ['object', 'function'],
  keyPath: 'string',
  key: 'function',
  service: ['string', 'boolean'],
  ttl: 'number',
  inProgressTtl: 'number',
  requireKey: 'boolean',
  keyPrefix: 'string',
  heartbeat: 'boolean',
  onStoreError: 'string',
  fingerprint: ['boolean', 'string', 'array', 'function'],
};

const { keyPath, key, ttl, inProgressTtl, requireKey, fingerprint } = CLAIM_OPTION_SHAPE;

/** What each `@Idempotent()` option takes: the module's kinds for the options it overrides. */
export const IDEMPOTENT_OPTION_SHAPE: OptionShape<IdempotentOptions> = {
  ...{ keyPath, key, ttl, inProgressTtl, requireKey, fingerprint },
  scope: 'string',
  transactional: 'boolean',
};

/** Module options with every default applied. */
export interface ResolvedIdempotencyOptions extends Required<
  Omit<IdempotencyClaimOptions, 'store' | 'key' | 'service' | 'fingerprint'>
> {
  key?: IdempotencyKeyFunction;
  /** Neither `keyPath` nor `key` was given: the key is an envelope's id, else the payload's `id`. */
  defaultKeySource?: boolean;
  /** The module's payload fingerprint option, checked (`undefined`: none). */
  fingerprint?: PayloadFingerprintOption;
  /** The fingerprint code, loaded at bootstrap where this module or an `@Idempotent()` declares a fingerprint. */
  fingerprinterOf?: PayloadFingerprinterOf;
  /** The store as the options' checks need it: its name for errors, and whether it keeps fingerprints. */
  store: { name: string; keepsFingerprints: boolean; runsTransactions?: boolean; maxKeyBytes?: number };
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
