import { createHash } from 'node:crypto';

/**
 * A short, stable stand-in for an idempotency key that may carry personal data (`hashKeys`): the
 * record log, the Idempotency Center and the records it shares show `h:` and 16 hex digits of the
 * key's SHA-256 instead of the key. The same key always gives the same hash, so an operator who
 * knows a key can still find its records.
 */
export function hashKeyForDisplay(key: string): string {
  return 'h:' + createHash('sha256').update(key).digest('hex').slice(0, 16);
}
