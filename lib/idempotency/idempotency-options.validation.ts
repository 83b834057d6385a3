import type { IdempotencyStore } from '../stores/idempotency-store.interface';
import { isSharedStore, keepsFingerprints, runsTransactions } from '../stores/idempotency-store.interface';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { parseKeyPath } from './idempotency-key';
import {
  IDEMPOTENCY_DEFAULTS,
  IdempotencyClaimOptions,
  IdempotentOptions,
  ResolvedIdempotencyOptions,
} from './idempotency-options.interface';
import { checkKeyName, checkLongestKey } from './key-bounds';
import { payloadFingerprinterOf } from './payload-fingerprint';
import { resolveServiceIdentity } from './service-identity';
import { describeDuration, TtlLimits, ttlLimitsFor } from './ttl-limits';

/**
 * Checks options at bootstrap, so a mistake stops the app with a sentence saying what to fix rather
 * than losing or double-running messages later. The store says whether it is shared and its TTL limit.
 */
export function resolveModuleOptions(
  options: IdempotencyClaimOptions = {},
  store: Pick<
    IdempotencyStore,
    'shared' | 'maxTtlMs' | 'maxKeyBytes' | 'tryAcquireWithFingerprint' | 'runInTransaction'
  > = {
    shared: false,
  },
  env: Readonly<Record<string, string | undefined>> = process.env,
): ResolvedIdempotencyOptions {
  const where = 'IdempotencyModule options';
  const storeName = nameOf(store);
  const { shared, maxTtlMs, maxKeyBytes } = checkStoreTraits(store, storeName);
  const limits = ttlLimitsFor(maxTtlMs, storeName);
  checkKeySource(options, where);
  const storeTraits = {
    name: storeName,
    keepsFingerprints: keepsFingerprints(store),
    runsTransactions: runsTransactions(store),
    ...(maxKeyBytes === undefined ? {} : { maxKeyBytes }),
  };
  const resolved: ResolvedIdempotencyOptions = {
    keyPath: options.keyPath ?? IDEMPOTENCY_DEFAULTS.keyPath,
    key: options.key,
    defaultKeySource: options.keyPath === undefined && options.key === undefined,
    ttl: checkTtl(options.ttl ?? IDEMPOTENCY_DEFAULTS.ttl, where, limits),
    inProgressTtl: checkLease(options.inProgressTtl ?? IDEMPOTENCY_DEFAULTS.inProgressTtl, where, limits),
    requireKey: checkBoolean(options.requireKey ?? IDEMPOTENCY_DEFAULTS.requireKey, 'requireKey', where),
    keyPrefix: options.keyPrefix ?? IDEMPOTENCY_DEFAULTS.keyPrefix,
    heartbeat: checkBoolean(options.heartbeat ?? IDEMPOTENCY_DEFAULTS.heartbeat, 'heartbeat', where),
    onStoreError: options.onStoreError ?? IDEMPOTENCY_DEFAULTS.onStoreError,
    fingerprint: checkFingerprint(options.fingerprint, where, storeTraits) || undefined,
    store: storeTraits,
    identity: resolveServiceIdentity(options.service, { shared, name: storeName }, env),
    limits,
  };
  if (typeof resolved.keyPrefix !== 'string' || resolved.keyPrefix.length === 0) {
    throw new IdempotencyConfigurationError(`${where}: keyPrefix must be a non-empty string.`);
  }
  checkKeyName(resolved.keyPrefix, 'keyPrefix', where);
  const { service, source } = resolved.identity;
  checkKeyName(service, source === 'option' ? 'service' : `service (from ${source})`, where);
  checkLongestKey({ keyPrefix: resolved.keyPrefix, service }, storeTraits, where);
  if (resolved.onStoreError !== 'fail' && resolved.onStoreError !== 'process') {
    throw new IdempotencyConfigurationError(
      `${where}: onStoreError must be 'fail' or 'process', got ${String(resolved.onStoreError)}.`,
    );
  }
  return resolved;
}

/** Checks the options of one `@Idempotent()` declaration; `where` names the handler. */
export function checkIdempotentOptions(
  options: IdempotentOptions,
  where: string,
  limits: TtlLimits,
  store: ResolvedIdempotencyOptions['store'],
): void {
  checkKeySource(options, where);
  if (options.ttl !== undefined) checkTtl(options.ttl, where, limits);
  if (options.inProgressTtl !== undefined) checkLease(options.inProgressTtl, where, limits);
  if (options.requireKey !== undefined) checkBoolean(options.requireKey, 'requireKey', where);
  if (options.scope !== undefined && (typeof options.scope !== 'string' || options.scope.length === 0)) {
    throw new IdempotencyConfigurationError(`${where}: scope must be a non-empty string.`);
  }
  checkKeyName(options.scope, 'scope', where);
  checkFingerprint(options.fingerprint, where, store);
  if (options.transactional !== undefined) checkBoolean(options.transactional, 'transactional', where);
}

/** A transactional handler needs a store that opens transactions, and none of the options meaningless in one. */
export function checkTransactional(
  where: string,
  store: ResolvedIdempotencyOptions['store'],
  heartbeat: boolean,
  fingerprinted: boolean,
): void {
  if (store.runsTransactions !== true) {
    throw new IdempotencyConfigurationError(
      `${where}: transactional: true needs a store that runs the handler in a database transaction, and the store ` +
        `${store.name} cannot (it has no runInTransaction). Use PostgresIdempotencyStore from ` +
        'nestjs-idempotent-sqs/postgres on a pg Pool or a connection string (new PostgresIdempotencyStore(pool)), or ' +
        "on typeOrmTransactions(dataSource) for TypeORM, with the handler's tables in the same database; or drop " +
        'transactional to settle the claim after the handler as other stores do.',
    );
  }
  if (heartbeat) {
    throw new IdempotencyConfigurationError(
      `${where}: transactional: true cannot be combined with heartbeat: a transactional claim has no lease to ` +
        'extend (the open transaction holds the key; inProgressTtl bounds how long it may sit idle). Set ' +
        'heartbeat: false in the IdempotencyModule options, or drop transactional.',
    );
  }
  if (fingerprinted) {
    throw new IdempotencyConfigurationError(
      `${where}: transactional: true does not keep payload fingerprints yet. Turn fingerprint off for this ` +
        'handler (@Idempotent({ transactional: true, fingerprint: false })), or drop transactional.',
    );
  }
}

/**
 * A `fingerprint` that can work, on a store that keeps fingerprints: refused rather than ignored, since
 * silently acking a mismatch is what the option prevents.
 */
function checkFingerprint<T extends IdempotentOptions['fingerprint']>(
  option: T,
  where: string,
  store: ResolvedIdempotencyOptions['store'],
): T {
  if (payloadFingerprinterOf(option, where) !== undefined && !store.keepsFingerprints) {
    throw new IdempotencyConfigurationError(
      `${where}: fingerprint needs a store that keeps payload fingerprints (a tryAcquireWithFingerprint method), ` +
        `and the store ${store.name} has none. The in-memory, Redis, DynamoDB and Postgres stores keep them; add the ` +
        'method to your store (describeIdempotencyStore from nestjs-idempotent-sqs/testing checks it), or drop the option.',
    );
  }
  return option;
}

function checkKeySource(options: { keyPath?: string; key?: unknown }, where: string): void {
  if (options.keyPath !== undefined && options.key !== undefined) {
    throw new IdempotencyConfigurationError(`${where}: give either keyPath or key(), not both.`);
  }
  if (options.key !== undefined && typeof options.key !== 'function') {
    throw new IdempotencyConfigurationError(`${where}: key must be a function (payload, context) => key.`);
  }
  if (options.keyPath !== undefined) {
    const parsed = parseKeyPath(options.keyPath);
    if (typeof parsed === 'string') throw new IdempotencyConfigurationError(`${where}: ${parsed}.`);
  }
}

function checkTtl(value: unknown, where: string, limits: TtlLimits): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value <= 0) {
    throw new IdempotencyConfigurationError(
      `${where}: ttl must be a positive number of milliseconds (Infinity to remember keys forever), got ${String(value)}.`,
    );
  }
  if (value !== Infinity && value > limits.ttl) {
    throw new IdempotencyConfigurationError(
      `${where}: ttl must be at most ${limits.ttl} ms (${describeDuration(limits.ttl)}): ${limits.ttlReason}. Got ${value}.`,
    );
  }
  return value;
}

function checkLease(value: unknown, where: string, limits: TtlLimits): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new IdempotencyConfigurationError(
      `${where}: inProgressTtl must be a positive, finite number of milliseconds (a crashed worker's claim must expire), got ${String(value)}.`,
    );
  }
  if (value > limits.lease) {
    throw new IdempotencyConfigurationError(
      `${where}: inProgressTtl must be at most ${limits.lease} ms (${describeDuration(limits.lease)}): ${limits.leaseReason}. Got ${value}.`,
    );
  }
  return value;
}

function checkBoolean(value: unknown, name: string, where: string): boolean {
  if (typeof value !== 'boolean') {
    throw new IdempotencyConfigurationError(`${where}: ${name} must be true or false, got ${String(value)}.`);
  }
  return value;
}

/** Reads what the store says of itself, refusing values that would be misread. */
function checkStoreTraits(
  store: Pick<IdempotencyStore, 'shared' | 'maxTtlMs' | 'maxKeyBytes'>,
  name: string,
): { shared: boolean; maxTtlMs: number | undefined; maxKeyBytes: number | undefined } {
  const { shared, maxTtlMs, maxKeyBytes } = store;
  if (maxKeyBytes !== undefined && !(Number.isInteger(maxKeyBytes) && maxKeyBytes > 0)) {
    throw new IdempotencyConfigurationError(
      `IdempotencyModule: the store ${name} has maxKeyBytes = ${String(maxKeyBytes)}; it must be a positive integer number of bytes, or absent.`,
    );
  }
  if (shared !== undefined && typeof shared !== 'boolean') {
    throw new IdempotencyConfigurationError(
      `IdempotencyModule: the store ${name} has shared = ${String(shared)}; it must be true (other processes use its keys), false (this process only) or absent (treated as shared).`,
    );
  }
  if (maxTtlMs !== undefined && !(typeof maxTtlMs === 'number' && maxTtlMs > 0)) {
    throw new IdempotencyConfigurationError(
      `IdempotencyModule: the store ${name} has maxTtlMs = ${String(maxTtlMs)}; it must be a positive number of milliseconds, or absent.`,
    );
  }
  return { shared: isSharedStore(store), maxTtlMs, maxKeyBytes };
}

function nameOf(store: object): string {
  return store.constructor?.name && store.constructor !== Object
    ? store.constructor.name
    : 'given as an object literal';
}
