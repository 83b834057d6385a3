import type { FingerprintClaim } from './idempotency-store.interface';

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
