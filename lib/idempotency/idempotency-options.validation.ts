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
import { checkKeyName, checkLongestKey } from './store-key';
import type { PayloadFingerprinter, PayloadFingerprinterOf } from './payload-fingerprint';
import { resolveServiceIdentity } from './service-identity';
import { describeDuration, TtlLimits, ttlLimitsFor } from './ttl-limits';

/**
 * Checks option values at bootstrap, so a mistake stops the app with a sentence saying what to fix
 * rather than losing or double-running messages later. Their names and kinds were checked before
 * (`readOptions` in `IdempotencyModule` and `@Idempotent()`).
 */
export function resolveModuleOptions(
  options: IdempotencyClaimOptions = {},
  store: Pick<
    IdempotencyStore,
    'shared' | 'maxTtlMs' | 'maxKeyBytes' | 'keepsFingerprints' | 'runInTransaction'
  > = { shared: false },
  env: Readonly<Record<string, string | undefined>> = process.env,
  /** The fingerprint code, loaded where this module or an `@Idempotent()` declares a fingerprint. */
  fingerprinterOf?: PayloadFingerprinterOf,
): ResolvedIdempotencyOptions {
  const where = 'IdempotencyModule options';
  const name = storeClassName(store) ?? 'given as an object literal';
  checkStoreTraits(store, name);
  const storeTraits = {
    name,
    keepsFingerprints: keepsFingerprints(store),
    runsTransactions: runsTransactions(store),
    maxKeyBytes: store.maxKeyBytes,
  };
  const resolved: ResolvedIdempotencyOptions = {
    keyPath: options.keyPath ?? IDEMPOTENCY_DEFAULTS.keyPath,
    key: options.key,
    defaultKeySource: options.keyPath === undefined && options.key === undefined,
    ttl: options.ttl ?? IDEMPOTENCY_DEFAULTS.ttl,
    inProgressTtl: options.inProgressTtl ?? IDEMPOTENCY_DEFAULTS.inProgressTtl,
    requireKey: options.requireKey ?? IDEMPOTENCY_DEFAULTS.requireKey,
    keyPrefix: options.keyPrefix ?? IDEMPOTENCY_DEFAULTS.keyPrefix,
    heartbeat: options.heartbeat ?? IDEMPOTENCY_DEFAULTS.heartbeat,
    onStoreError: options.onStoreError ?? IDEMPOTENCY_DEFAULTS.onStoreError,
    fingerprint: options.fingerprint || undefined,
    fingerprinterOf,
    store: storeTraits,
    identity: resolveServiceIdentity(options.service, { shared: isSharedStore(store), name }, env),
    limits: ttlLimitsFor(store.maxTtlMs, name),
  };
  // The handler's checks, defaults included (a store's maxTtlMs may be below them); the keyPath as
  // given, since the default beside a key() is no conflict.
  checkIdempotentOptions({ ...resolved, keyPath: options.keyPath }, where, resolved);
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

/** Checks the values of one `@Idempotent()` declaration (or the module's); `where` names the handler. */
export function checkIdempotentOptions(
  options: IdempotentOptions,
  where: string,
  {
    limits,
    store,
    fingerprinterOf,
  }: Pick<ResolvedIdempotencyOptions, 'limits' | 'store' | 'fingerprinterOf'>,
): void {
  if (options.keyPath !== undefined && options.key !== undefined) {
    throw new IdempotencyConfigurationError(`${where}: give either keyPath or key(), not both.`);
  }
  if (options.keyPath !== undefined) {
    const parsed = parseKeyPath(options.keyPath);
    if (typeof parsed === 'string') throw new IdempotencyConfigurationError(`${where}: ${parsed}.`);
  }
  if (options.ttl !== undefined) checkDuration(options.ttl, 'ttl', where, limits);
  if (options.inProgressTtl !== undefined)
    checkDuration(options.inProgressTtl, 'inProgressTtl', where, limits);
  checkKeyName(options.scope, 'scope', where);
  // Refused rather than ignored: silently acking a mismatch is what the option prevents.
  if (
    fingerprinterFor(options.fingerprint, where, fingerprinterOf) !== undefined &&
    !store.keepsFingerprints
  ) {
    throw new IdempotencyConfigurationError(
      `${where}: fingerprint needs a store that keeps payload fingerprints (keepsFingerprints: true), and the ` +
        `store ${store.name} keeps none. The in-memory, Redis, DynamoDB and Postgres stores keep them; have your ` +
        "store's tryAcquire keep its claim argument and say keepsFingerprints (describeIdempotencyStore from " +
        'nestjs-idempotent-sqs/testing checks it), or drop the option.',
    );
  }
}

/**
 * The fingerprinter an option asks for (`undefined`: none); throws naming `where` for one that cannot
 * work, and for one declared where the fingerprint code was not loaded: on a class decorated after the
 * app started (a module loaded lazily), since it loads at bootstrap where a fingerprint is declared.
 */
export function fingerprinterFor(
  option: IdempotentOptions['fingerprint'],
  where: string,
  fingerprinterOf: PayloadFingerprinterOf | undefined,
): PayloadFingerprinter | undefined {
  if (option === undefined || option === false) return undefined;
  if (fingerprinterOf !== undefined) return fingerprinterOf(option, where);
  throw new IdempotencyConfigurationError(
    `${where}: fingerprint is declared on a class decorated after the app started (a module loaded lazily?), ` +
      'and the fingerprint code loads at bootstrap where a fingerprint is declared. Import the class before ' +
      'the app starts.',
  );
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

/** A `ttl` (`Infinity`: forever) or an `inProgressTtl` (finite: a crashed worker's claim must expire). */
function checkDuration(
  value: number,
  option: 'ttl' | 'inProgressTtl',
  where: string,
  limits: TtlLimits,
): void {
  const lease = option === 'inProgressTtl';
  if (Number.isNaN(value) || value <= 0 || (lease && value === Infinity)) {
    throw new IdempotencyConfigurationError(
      lease
        ? `${where}: inProgressTtl must be a positive, finite number of milliseconds (a crashed worker's claim must expire), got ${value}.`
        : `${where}: ttl must be a positive number of milliseconds (Infinity to remember keys forever), got ${value}.`,
    );
  }
  const [limit, reason] = lease ? [limits.lease, limits.leaseReason] : [limits.ttl, limits.ttlReason];
  if (value !== Infinity && value > limit) {
    throw new IdempotencyConfigurationError(
      `${where}: ${option} must be at most ${limit} ms (${describeDuration(limit)}): ${reason}. Got ${value}.`,
    );
  }
}

const STORE_TRAITS: Record<'maxKeyBytes' | 'shared' | 'maxTtlMs', [(value: unknown) => boolean, string]> = {
  maxKeyBytes: [
    (value) => Number.isInteger(value) && (value as number) > 0,
    'a positive integer number of bytes, or absent',
  ],
  shared: [
    (value) => typeof value === 'boolean',
    'true (other processes use its keys), false (this process only) or absent (treated as shared)',
  ],
  maxTtlMs: [
    (value) => typeof value === 'number' && value > 0,
    'a positive number of milliseconds, or absent',
  ],
};

/** Refuses what the store says of itself when it would be misread. */
function checkStoreTraits(store: Pick<IdempotencyStore, keyof typeof STORE_TRAITS>, name: string): void {
  for (const [trait, [valid, expected]] of Object.entries(STORE_TRAITS)) {
    const value = store[trait as keyof typeof STORE_TRAITS];
    if (value !== undefined && !valid(value)) {
      throw new IdempotencyConfigurationError(
        `IdempotencyModule: the store ${name} has ${trait} = ${String(value)}; it must be ${expected}.`,
      );
    }
  }
}

/** The class a store was built from, `undefined` for an object literal. */
export function storeClassName(store: object): string | undefined {
  const { constructor } = store;
  return typeof constructor === 'function' && constructor !== Object && constructor.name
    ? constructor.name
    : undefined;
}
