import { createHash } from 'node:crypto';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { KeyPath, parseKeyPath, readKeyPath } from './idempotency-key';

/**
 * Payload fingerprints: a short hash of what an event says, kept with its idempotency claim, so a
 * second payload under the same key is caught instead of being acked as a duplicate of the first
 * (a producer that reuses keys for different events, or a forged message). The comparison itself
 * lives in the claim step (`idempotency.service.ts`); this file decides what is hashed and how.
 *
 * The hash is SHA-256 over a canonical JSON of the chosen value (object keys sorted, so two
 * serializations of one event agree), cut to 96 bits (16 characters of base64url). That length is
 * safe because a fingerprint is only ever compared with the other fingerprints of ONE key, never
 * across keys: there is no birthday bound over the key space, and two different payloads of one key
 * share a fingerprint with probability 2^-96. Forging a payload that matches another's fingerprint
 * needs a second preimage of SHA-256 cut to 96 bits (about 2^96 hashes), and would only make the
 * forged copy an ordinary duplicate, acked without running: what happens to every copy today.
 */

/** Computes what the fingerprint hashes from the event and the host's context (an `SqsContext` for SQS handlers). */
export type PayloadFingerprintFunction = (event: any, context: any) => unknown;

/**
 * What `fingerprint` hashes:
 * - `true` or `'event'`: the whole event as the handler receives it (validated and transformed);
 * - an array of dot paths (`['orderId', 'lines']`): those fields only, read as `keyPath` reads the key;
 * - a function `(event, context) => value`: the value it returns.
 */
export type PayloadFingerprintOption = true | 'event' | readonly string[] | PayloadFingerprintFunction;

/** Characters of a fingerprint: 16 of base64url, 96 bits of SHA-256. */
export const FINGERPRINT_LENGTH = 16;

/** A handler's fingerprint, resolved once at bootstrap. */
export interface PayloadFingerprinter {
  /** What is hashed, for the Center and errors: `the event`, `fields orderId, amount`, `fingerprint()`. */
  readonly source: string;
  /** The fingerprint of one message. Throws when the value cannot be hashed (a cycle). */
  readonly of: (event: unknown, context: unknown) => string;
}

/**
 * The fingerprinter for an option, or `undefined` for none (`undefined`/`false`). Throws an
 * `IdempotencyConfigurationError` naming `where` for an option that cannot work.
 */
export function payloadFingerprinterOf(
  option: PayloadFingerprintOption | false | undefined,
  where: string,
): PayloadFingerprinter | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true || option === 'event') {
    return { source: 'the event', of: (event) => fingerprintOf(event) };
  }
  if (typeof option === 'function') {
    return { source: 'fingerprint()', of: (event, context) => fingerprintOf(option(event, context)) };
  }
  if (Array.isArray(option)) return fieldsFingerprinter(option, where);
  throw new IdempotencyConfigurationError(
    `${where}: fingerprint must be true or 'event' (the whole event), an array of dot paths (['orderId', 'lines']) ` +
      `or a function (event, context) => value, got ${describe(option)}.`,
  );
}

/** Bytes of the digest kept: 12 bytes are exactly 16 characters of base64url (no padding). */
const FINGERPRINT_BYTES = (FINGERPRINT_LENGTH * 6) / 8;

/**
 * The fingerprint of a value: SHA-256 of its canonical JSON, 16 characters of base64url. Encoded
 * from the first 12 bytes rather than cut from the whole digest's text: a cut would be a slice
 * keeping the 43-character text alive in a store that keeps the fingerprint in memory.
 */
export function fingerprintOf(value: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(value))
    .digest()
    .toString('base64url', 0, FINGERPRINT_BYTES);
}

/**
 * The value as `JSON.stringify` writes it (`toJSON` honoured, `undefined` and functions left out of
 * objects and written `null` in arrays, non-finite numbers `null`), with every object's keys sorted,
 * so that key order never changes the text. A `BigInt` is written `123n` (JSON has none); a cycle
 * throws. A top-level `undefined` is written `null`.
 */
export function canonicalJson(value: unknown): string {
  return write(value, '', []) ?? 'null';
}

function write(value: unknown, key: string, ancestors: object[]): string | undefined {
  if (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  ) {
    value = (value as { toJSON(key: string): unknown }).toJSON(key);
  }
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return `${value}n`;
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null) return 'null';
  if (value instanceof Number || value instanceof String || value instanceof Boolean) {
    return write(value.valueOf(), key, ancestors);
  }
  const object = value as Record<string, unknown>;
  if (ancestors.includes(object)) {
    throw new TypeError('the value to fingerprint holds a circular reference');
  }
  ancestors.push(object);
  let text: string;
  if (Array.isArray(object)) {
    text = `[${object.map((item, index) => write(item, String(index), ancestors) ?? 'null').join(',')}]`;
  } else {
    const members: string[] = [];
    for (const name of Object.keys(object).sort()) {
      const member = write(object[name], name, ancestors);
      if (member !== undefined) members.push(`${JSON.stringify(name)}:${member}`);
    }
    text = `{${members.join(',')}}`;
  }
  ancestors.pop();
  return text;
}

/** Hashes `{ "<path>": value }` for each path: a missing field is left out, so it differs from `null`. */
function fieldsFingerprinter(paths: readonly unknown[], where: string): PayloadFingerprinter {
  if (paths.length === 0) {
    throw new IdempotencyConfigurationError(
      `${where}: fingerprint is an empty array; list the fields that identify the event (['orderId', 'amount']), or use true for the whole event.`,
    );
  }
  const parsed: Array<[string, KeyPath]> = paths.map((path) => {
    const segments = parseKeyPath(path);
    if (typeof segments === 'string') {
      throw new IdempotencyConfigurationError(`${where}: fingerprint fields: ${segments}.`);
    }
    return [path as string, segments];
  });
  return {
    source: `fields ${paths.join(', ')}`,
    of: (event) => {
      const fields: Record<string, unknown> = {};
      for (const [path, segments] of parsed) fields[path] = readKeyPath(event, segments);
      return fingerprintOf(fields);
    },
  };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}
