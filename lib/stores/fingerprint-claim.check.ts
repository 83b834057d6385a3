import type { FingerprintClaim } from './idempotency-store.interface';

/**
 * Checks a `tryAcquireWithFingerprint` claim as the protocol defines it, in every shipped store
 * alike: a fingerprint is a non-empty string without spaces (the Redis and in-memory stores keep it
 * beside the message id in one string, a space apart), a message id a string when present. The
 * module's claims always pass; a direct caller's bad claim is refused before any write.
 */
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
