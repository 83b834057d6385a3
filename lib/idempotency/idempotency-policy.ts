import { describeUnusableKey, KeyPath, parseKeyPath, readKeyPath, toIdempotencyKey } from './idempotency-key';
import { describeMessageOf, envelopeKeyOf } from './idempotency-state';
import { MissingIdempotencyKeyError } from './idempotency.errors';
import type { IdempotentOptions, ResolvedIdempotencyOptions } from './idempotency-options.interface';
import {
  checkIdempotentOptions,
  checkTransactional,
  fingerprinterFor,
} from './idempotency-options.validation';
import type { PayloadFingerprinter } from './payload-fingerprint';
import { checkLongestKey, storeKeyOf, storeKeyPrefixOf } from './store-key';

/** One handler's settings (the module's, overridden by its `@Idempotent()`), resolved at bootstrap. */
export interface IdempotencyPolicy extends Readonly<
  Pick<ResolvedIdempotencyOptions, 'ttl' | 'inProgressTtl' | 'requireKey' | 'heartbeat' | 'onStoreError'>
> {
  /** `Class.method`, for logs and errors. */
  readonly handlerName: string;
  /** The handled event type (SQS event type name or message pattern). */
  readonly eventType: string;
  /** Dedup namespace: `scope` option, else the event type. */
  readonly scope: string;
  /** `<keyPrefix>:<service>:<scope>:`, escaped once: per message only the key is escaped and appended. */
  readonly storeKeyPrefix: string;
  /** Where the key comes from, for error messages: `keyPath "id"` or `key()`. */
  readonly keySource: string;
  /**
   * The key path read, when the key comes from one (`undefined` with `key()`): its segments, and
   * whether it was chosen (`false`: the default `id`, which an envelope's id may stand in for).
   */
  readonly keyPath?: { readonly segments: KeyPath; readonly chosen: boolean };
  readonly resolveKey: (payload: unknown, context: unknown) => unknown;
  /** The payload fingerprint kept with each claim and compared on later ones; `undefined`: none. */
  readonly fingerprint?: PayloadFingerprinter;
  /** The handler runs in the store's transaction, its writes committing with the completion. */
  readonly transactional: boolean;
}

/**
 * The store key under which a handler claims `key`: the one function the claim and the Center's key
 * lookup share, so a lookup reads exactly the entry a claim wrote.
 */
export function storeKeyFor(policy: Pick<IdempotencyPolicy, 'storeKeyPrefix'>, key: string): string {
  return storeKeyOf(policy.storeKeyPrefix, key);
}

/** Builds a handler's policy; throws `IdempotencyConfigurationError` naming the handler. */
export function buildIdempotencyPolicy(
  moduleOptions: ResolvedIdempotencyOptions,
  declared: IdempotentOptions,
  handlerName: string,
  eventType: string,
): IdempotencyPolicy {
  const where = `@Idempotent() on ${handlerName}`;
  checkIdempotentOptions(declared, where, moduleOptions);
  // A key source declared on the handler wins over the module's, whichever kind it is.
  const ownSource = declared.key !== undefined || declared.keyPath !== undefined;
  const keyFunction = ownSource ? declared.key : moduleOptions.key;
  const keyPath = ownSource ? declared.keyPath : moduleOptions.keyPath;
  const scope = declared.scope ?? eventType;
  checkLongestKey(
    { keyPrefix: moduleOptions.keyPrefix, service: moduleOptions.identity.service, scope },
    moduleOptions.store,
    declared.scope === undefined ? `${where} (scope: the event type "${eventType}")` : where,
  );
  // Parsed by checkIdempotentOptions (the handler's) or resolveModuleOptions (the module's).
  const segments = keyFunction ? undefined : (parseKeyPath(keyPath) as KeyPath);
  const reader = keyFunction ?? ((payload: unknown) => readKeyPath(payload, segments!));
  // No key source anywhere: an envelope's id (EventBridge, CloudEvents, S3) names the event better
  // than any field of the event inside it; raw messages keep the payload's `id`.
  const resolveKey =
    !ownSource && moduleOptions.defaultKeySource === true
      ? (payload: unknown, context: unknown) => envelopeKeyOf(context) ?? reader(payload, context)
      : reader;
  const fingerprint = fingerprinterFor(
    declared.fingerprint !== undefined ? declared.fingerprint : moduleOptions.fingerprint,
    declared.fingerprint !== undefined ? where : 'IdempotencyModule options',
    moduleOptions.fingerprinterOf,
  );
  const transactional = declared.transactional === true;
  if (transactional) {
    checkTransactional(where, moduleOptions.store, moduleOptions.heartbeat, fingerprint !== undefined);
  }
  return {
    handlerName,
    eventType,
    scope,
    storeKeyPrefix: storeKeyPrefixOf(moduleOptions.keyPrefix, moduleOptions.identity.service, scope),
    keySource: keyFunction ? 'key()' : `keyPath "${keyPath}"`,
    keyPath: segments && { segments, chosen: ownSource || moduleOptions.defaultKeySource !== true },
    resolveKey,
    ttl: declared.ttl ?? moduleOptions.ttl,
    inProgressTtl: declared.inProgressTtl ?? moduleOptions.inProgressTtl,
    requireKey: declared.requireKey ?? moduleOptions.requireKey,
    heartbeat: moduleOptions.heartbeat,
    onStoreError: moduleOptions.onStoreError,
    fingerprint,
    transactional,
  };
}

/**
 * A record's idempotency key under `policy`, or `undefined` where it has none and `requireKey: false`
 * lets it run without one (KEYLESS); a missing key otherwise throws, naming where it was read.
 */
export function recordKeyOf(
  policy: IdempotencyPolicy,
  payload: unknown,
  hostContext: unknown,
): string | undefined {
  const resolved = policy.resolveKey(payload, hostContext);
  const key = toIdempotencyKey(resolved);
  if (key === undefined && policy.requireKey) {
    throw new MissingIdempotencyKeyError(
      policy.eventType,
      `the ${policy.keySource}`,
      describeUnusableKey(resolved),
      describeMessageOf(hostContext),
    );
  }
  return key;
}
