import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import type {
  AcquireAnswer,
  AcquireResult,
  FingerprintClaim,
  FingerprintedAcquireAnswer,
  IdempotencyKeyInspection,
} from './idempotency-store.interface';

/** What the stores do alike: their arguments, answers and start-up. */

/** `ttlMs` in whole milliseconds (rounded up), `undefined` for `Infinity` (no expiry); anything else throws. */
export function wholeTtlMs(ttlMs: number, store: string, maxMs = Infinity): number | undefined {
  if (ttlMs === Infinity) return undefined;
  if (!(ttlMs > 0) || ttlMs > maxMs) {
    const limit = maxMs === Infinity ? '' : ` up to ${maxMs} (or Infinity for no expiry)`;
    throw new RangeError(`${store}: a TTL must be a positive number of milliseconds${limit}, got ${ttlMs}.`);
  }
  return Math.ceil(ttlMs);
}

/** A fingerprint claim as the protocol defines it (a fingerprint without spaces: stores keep it beside the message id). */
export function checkFingerprintClaim(claim: FingerprintClaim, store: string): FingerprintClaim {
  const fingerprint: unknown = claim?.fingerprint;
  if (typeof fingerprint !== 'string' || fingerprint.length === 0 || fingerprint.includes(' ')) {
    throw new TypeError(
      `${store}: a fingerprint must be a non-empty string without spaces, got ${JSON.stringify(fingerprint)}.`,
    );
  }
  if (claim.messageId !== undefined && typeof claim.messageId !== 'string') {
    throw new TypeError(`${store}: a message id must be a string, got ${JSON.stringify(claim.messageId)}.`);
  }
  return claim;
}

/**
 * What a store of strings (in memory, Redis) keeps of a fingerprint claim, checked: one string,
 * `<fingerprint>[ <message id>]` (`join` copies, where a `+` would keep both parts alive in V8).
 */
export function keptClaimOf(claim: FingerprintClaim, store: string): string {
  const { fingerprint, messageId } = checkFingerprintClaim(claim, store);
  return messageId ? [fingerprint, messageId].join(' ') : fingerprint;
}

/** A lost claim's answer from what `keptClaimOf` kept. */
export function keptClaimAnswer(result: AcquireResult, kept: string): FingerprintedAcquireAnswer {
  const space = kept.indexOf(' ');
  return space < 0
    ? { result, fingerprint: kept }
    : { result, fingerprint: kept.slice(0, space), messageId: kept.slice(space + 1) };
}

/** `inspect`'s answer for a live key, with the time left unless it never expires. */
export function liveKeyInspection(completed: boolean, leftMs: number | undefined): IdempotencyKeyInspection {
  if (completed) {
    return leftMs === undefined ? { state: 'COMPLETED' } : { state: 'COMPLETED', expiresInMs: leftMs };
  }
  return leftMs === undefined ? { state: 'IN_PROGRESS' } : { state: 'IN_PROGRESS', leaseLeftMs: leftMs };
}

/** A lost claim's answer, with what the holding claim kept (the bare result when it kept no fingerprint). */
export function heldClaimAnswer(
  result: AcquireResult,
  fingerprint: string | null | undefined,
  messageId: string | null | undefined,
): AcquireAnswer {
  if (fingerprint == null) return result;
  return messageId == null ? { result, fingerprint } : { result, fingerprint, messageId };
}

/** The `startupTimeoutMs` option, checked (default 5 s). */
export function startupTimeoutOf(options: { startupTimeoutMs?: number }, store: string): number {
  const ms = options.startupTimeoutMs ?? 5_000;
  if (!(ms > 0)) {
    throw new IdempotencyConfigurationError(
      `${store}: startupTimeoutMs must be a positive number of milliseconds, got ${options.startupTimeoutMs}.`,
    );
  }
  return ms;
}

/** Whether `value` is an object with each of the `methods` (structurally a `T`). */
export function hasMethods<T extends object>(value: unknown, ...methods: string[]): value is T {
  return (
    typeof value === 'object' &&
    value !== null &&
    methods.every((name) => typeof (value as Record<string, unknown>)[name] === 'function')
  );
}
