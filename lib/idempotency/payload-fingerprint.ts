import { hash } from 'node:crypto';
import { describeValue } from '../common/known-options';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { fingerprintClaimOf, fingerprintMismatchOf } from './fingerprinted-claim';
import { KeyPath, parseKeyPath, readKeyPath } from './idempotency-key';

// Payload fingerprints (loaded at bootstrap where a fingerprint is declared): a hash of what a message said as it arrived (its decoded payload, before any
// class transformed it), kept with its claim, so a second payload under the same key is caught instead
// of acked as a duplicate. Plain JSON only: its text with sorted keys is the same in every process,
// time zone and Node version, and two values that differ write differently. 96 bits of SHA-256 are
// enough: a fingerprint is only compared within one key, so no birthday bound applies.

/** Selects what the fingerprint hashes from the payload as it arrived and the host's context (an `SqsContext` for SQS handlers). */
export type PayloadFingerprintFunction = (payload: any, context: any) => unknown;

/** What `fingerprint` hashes: the payload (`true`, `'event'`), some fields (dot paths), or what a function returns. */
export type PayloadFingerprintOption = true | 'event' | readonly string[] | PayloadFingerprintFunction;

/** A handler's fingerprint, resolved once at bootstrap. */
export interface PayloadFingerprinter {
  /** What is hashed, for the Center and errors: `the payload`, `fields orderId, amount`, `fingerprint()`. */
  readonly source: string;
  /** The fingerprint of one message's payload as it arrived. Throws naming the field that is not plain JSON. */
  readonly of: (payload: unknown, context: unknown) => string;
  /** What the claim keeps (`fingerprinted-claim.ts`), carried here so the claim imports no fingerprint code. */
  readonly claimOf: typeof fingerprintClaimOf;
  /** The error a held key's other fingerprint fails the record with (`fingerprinted-claim.ts`). */
  readonly mismatchOf: typeof fingerprintMismatchOf;
}

/** `payloadFingerprinterOf`'s type: what `IdempotencyModule` loads where a fingerprint is declared. */
export type PayloadFingerprinterOf = typeof payloadFingerprinterOf;

/** The fingerprinter for an option (`undefined` for none); throws naming `where` for one that cannot work. */
export function payloadFingerprinterOf(
  option: PayloadFingerprintOption | false | undefined,
  where: string,
): PayloadFingerprinter | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true || option === 'event') return fingerprinter('the payload', fingerprintOf);
  if (typeof option === 'function') {
    return fingerprinter('fingerprint()', (payload, context) => fingerprintOf(option(payload, context)));
  }
  if (Array.isArray(option)) return fieldsFingerprinter(option, where);
  throw new IdempotencyConfigurationError(
    `${where}: fingerprint must be true or 'event' (the whole payload), an array of dot paths (['orderId', 'lines']) ` +
      `or a function (payload, context) => value, got ${describeValue(option)}.`,
  );
}

/**
 * SHA-256 of the canonical JSON: 12 bytes as 16 base64url characters (encoded from the bytes, since a
 * slice of the text would keep the whole digest alive in a store that keeps fingerprints in memory).
 */
export function fingerprintOf(value: unknown): string {
  return hash('sha256', canonicalJson(value), 'buffer').toString('base64url', 0, 12);
}

/**
 * `JSON.stringify`'s text of a plain JSON value with every object's keys sorted (so key order never
 * changes it); bytes (a `'base64'` body) as `Bytes(<base64>)`, a form no JSON text has. An object
 * member that is `undefined` is left out, as JSON leaves it. Anything else throws, naming the field: a
 * class instance (a `Date`, a type with `#private` state: JSON would write what it chooses, or `{}`),
 * a cycle, a value JSON cannot write (`undefined` in an array, a `BigInt`, `NaN`, a function), and an
 * integer past 2^53 (JSON parsing rounded it: two numbers may read the same), a value nested deeper
 * than `JSON.stringify` writes.
 */
export function canonicalJson(value: unknown): string {
  try {
    return write(value, [], []);
  } catch (error) {
    // Deeper than the stack goes (some 3,000 levels: as deep as JSON.stringify writes).
    if (!(error instanceof RangeError)) throw error;
    throw new TypeError('the value is nested too deeply to write as JSON', { cause: error });
  }
}

/** `value`'s text; `path` names it (its keys and indexes), `open` holds the containers it is inside. */
function write(value: unknown, path: Array<string | number>, open: object[]): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw refused(path, `is ${value}, which JSON cannot write`);
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
        throw refused(path, `is the integer ${value}, beyond 2^53 where JSON numbers are rounded`);
      }
      return String(value); // JSON's text for a finite number
    case 'object':
      if (value === null) return 'null';
      break;
    case 'bigint':
      throw refused(path, `is the BigInt ${value}n, which JSON cannot write`);
    default:
      throw refused(
        path,
        `is ${value === undefined ? 'undefined' : `a ${typeof value}`}, which JSON cannot write`,
      );
  }
  if (open.includes(value)) throw refused(path, 'holds a circular reference');
  const prototype: unknown = Object.getPrototypeOf(value);
  open.push(value);
  let text: string;
  if (prototype === Array.prototype) {
    const array = value as unknown[];
    text = '[';
    for (let i = 0; i < array.length; i++) {
      path.push(i);
      text += (i === 0 ? '' : ',') + write(array[i], path, open);
      path.pop();
    }
    text += ']';
  } else if (prototype === Object.prototype || prototype === null) {
    const object = value as Record<string, unknown>;
    text = '{';
    for (const key of Object.keys(object).sort()) {
      const member = object[key];
      if (member === undefined) continue;
      path.push(key);
      text += `${text.length === 1 ? '' : ','}${JSON.stringify(key)}:${write(member, path, open)}`;
      path.pop();
    }
    text += '}';
  } else if (value instanceof Uint8Array) {
    text = `Bytes(${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')})`;
  } else {
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    throw refused(
      path,
      `is ${typeof name === 'string' && name ? `a ${name}` : 'an object of a class'}, not plain JSON`,
    );
  }
  open.pop();
  return text;
}

/** A value that cannot be fingerprinted, named by its dot path in the fingerprinted value. */
function refused(path: ReadonlyArray<string | number>, problem: string): TypeError {
  return new TypeError(path.length === 0 ? `the value ${problem}` : `the field ${path.join('.')} ${problem}`);
}

/** Hashes `{ "<path>": value }` for each path: a missing field is left out, so it differs from `null`. */
function fieldsFingerprinter(paths: readonly unknown[], where: string): PayloadFingerprinter {
  if (paths.length === 0) {
    throw new IdempotencyConfigurationError(
      `${where}: fingerprint is an empty array; list the fields that identify the event (['orderId', 'amount']), or use true for the whole payload.`,
    );
  }
  const parsed: Array<[string, KeyPath]> = paths.map((path) => {
    const segments = parseKeyPath(path);
    if (typeof segments === 'string') {
      throw new IdempotencyConfigurationError(`${where}: fingerprint fields: ${segments}.`);
    }
    return [path as string, segments];
  });
  return fingerprinter(`fields ${paths.join(', ')}`, (payload) => {
    const fields: Record<string, unknown> = {};
    for (const [path, segments] of parsed) fields[path] = readKeyPath(payload, segments);
    return fingerprintOf(fields);
  });
}

function fingerprinter(source: string, of: PayloadFingerprinter['of']): PayloadFingerprinter {
  return { source, of, claimOf: fingerprintClaimOf, mismatchOf: fingerprintMismatchOf };
}
