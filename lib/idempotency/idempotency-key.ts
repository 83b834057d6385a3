import { createHash, hash } from 'node:crypto';
import { describeValue } from '../common/known-options';

/**
 * Idempotency keys: where they are read from and what counts as one. Only own properties are
 * traversed; only non-empty strings, finite numbers (integers within 2^53) and bigints are keys
 * (anything else would make events collide); a key too long, with control characters, or already
 * reading `sha256:...` is stored as its SHA-256, so no producer can forge another event's stored key.
 */

/** A parsed key path: its segments, checked once at bootstrap. */
export type KeyPath = readonly string[];

const FORBIDDEN_SEGMENTS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_PLAIN_KEY_LENGTH = 200;
const HASHED_KEY_MARK = 'sha256:';

/**
 * The most UTF-8 bytes a key takes in a store key, escaped (`store-key.ts`): a plain key has at most
 * 200 UTF-16 units, and none becomes more than 3 bytes (`:` escapes to `%3A`, a BMP character is 3
 * bytes, a surrogate pair 4 for 2 units); a longer key is its 71-byte digest.
 */
export const MAX_KEY_SEGMENT_BYTES = MAX_PLAIN_KEY_LENGTH * 3;
// Control characters (C0, DEL, C1) and UTF-16 surrogates that are not part of a pair.
const UNSAFE_KEY_CHARACTERS =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** `"metadata.eventId"` as segments, or an explanation when the path cannot work. */
export function parseKeyPath(path: unknown): KeyPath | string {
  if (typeof path !== 'string' || path.length === 0) {
    return `a key path must be a non-empty string such as "id" or "metadata.eventId", got ${describeValue(path)}`;
  }
  const segments = path.split('.');
  for (const segment of segments) {
    if (segment.length === 0 || segment.trim() !== segment) {
      return `key path "${path}" has an empty or padded segment; write segments joined by single dots, e.g. "metadata.eventId"`;
    }
    if (FORBIDDEN_SEGMENTS.has(segment)) {
      return `key path "${path}" goes through "${segment}", which never resolves (only the payload's own fields are read)`;
    }
  }
  return segments;
}

/** Reads the value at `path` from `payload`, through own properties only. */
export function readKeyPath(payload: unknown, path: KeyPath): unknown {
  let value = payload;
  for (let i = 0; i < path.length; i++) {
    if (
      value === null ||
      typeof value !== 'object' ||
      !Object.prototype.hasOwnProperty.call(value, path[i])
    ) {
      return undefined;
    }
    value = (value as Record<string, unknown>)[path[i]];
  }
  return value;
}

/** The key for a resolved value, or `undefined` when the value is not a usable key. */
export function toIdempotencyKey(value: unknown): string | undefined {
  let key: string;
  if (typeof value === 'string') {
    if (value.length === 0) return undefined;
    key = value;
  } else if (typeof value === 'number') {
    if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value)))
      return undefined;
    key = String(value);
  } else if (typeof value === 'bigint') {
    key = value.toString();
  } else {
    return undefined;
  }
  return key.length > MAX_PLAIN_KEY_LENGTH ||
    UNSAFE_KEY_CHARACTERS.test(key) ||
    key.startsWith(HASHED_KEY_MARK)
    ? HASHED_KEY_MARK + createHash('sha256').update(key, 'utf16le').digest('hex')
    : key;
}

/** Why `value` is not a usable key, phrased to follow "the key ...". Only called on the failure path. */
export function describeUnusableKey(value: unknown): string {
  if (value === undefined) return 'is missing';
  if (typeof value === 'string') return 'is an empty string';
  if (typeof value === 'number') {
    return Number.isFinite(value)
      ? `is the integer ${value}, beyond 2^53 where JSON numbers lose precision (send it as a string)`
      : `is ${value}, not a finite number`;
  }
  return `is ${describeValue(value)}, not a string or a number`;
}

/**
 * A stand-in for a key that may carry personal data (`hashKeys`): `h:` and 16 hex digits of its
 * SHA-256, the same for the same key, so an operator who knows a key can still find its records.
 */
export function hashKeyForDisplay(key: string): string {
  // The one-shot `hash()` (Node 20.12): no Hash object per record (the record span hashes every key).
  return 'h:' + hash('sha256', key, 'buffer').toString('hex', 0, 8);
}
