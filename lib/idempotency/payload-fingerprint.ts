import { createHash } from 'node:crypto';
import { describeValue } from '../common/known-options';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { KeyPath, parseKeyPath, readKeyPath } from './idempotency-key';

/**
 * Payload fingerprints: a hash of what an event says, kept with its claim, so a second payload under
 * the same key is caught instead of acked as a duplicate. SHA-256 of a canonical JSON cut to 96 bits
 * is enough: a fingerprint is only compared within one key, so no birthday bound applies.
 */

/** Computes what the fingerprint hashes from the event and the host's context (an `SqsContext` for SQS handlers). */
export type PayloadFingerprintFunction = (event: any, context: any) => unknown;

/** What `fingerprint` hashes: the event (`true`, `'event'`), some fields (dot paths), or what a function returns. */
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

/** The fingerprinter for an option (`undefined` for none); throws naming `where` for one that cannot work. */
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
      `or a function (event, context) => value, got ${describeValue(option)}.`,
  );
}

/** Bytes of the digest kept: 12 bytes are exactly 16 characters of base64url (no padding). */
const FINGERPRINT_BYTES = (FINGERPRINT_LENGTH * 6) / 8;

/**
 * SHA-256 of the canonical JSON, 16 base64url characters encoded from 12 bytes (a slice of the text
 * would keep the whole digest alive in a store that keeps fingerprints in memory).
 */
export function fingerprintOf(value: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(value))
    .digest()
    .toString('base64url', 0, FINGERPRINT_BYTES);
}

/**
 * `JSON.stringify`'s text with every object's keys sorted (so key order never changes it), and a form
 * of its own, where no JSON text can be, for what JSON would blur (sets, maps, bytes, non-finite
 * numbers, `BigInt`); refused, naming the field: an invalid `Date`, an unsafe integer, a value of no
 * stable content, a cycle.
 */
export function canonicalJson(value: unknown): string {
  const root = classify(value, '', EMPTY_STACK);
  if (typeof root !== 'object') return root ?? 'null';
  return new CanonicalWriter().write(root);
}

const EMPTY_STACK: readonly Frame[] = [];

const enum Kind {
  Object,
  Array,
  Set,
  Map,
}

/** A container being written: an object or array straight into the text, a Set or Map member by member. */
interface Frame {
  readonly kind: Kind;
  /** The object's or array's own values, or the Set's members, or the Map's keys and values in turn. */
  readonly source: any;
  /** An object's sorted keys. */
  readonly keys?: readonly string[];
  readonly length: number;
  index: number;
  /** Something was written into the object or array (a comma goes before the next). */
  written: boolean;
  /** The container's name in its parent, for errors (`lines`, `2`). */
  readonly segment: string | number;
  /** The identity cycles are found by. */
  readonly identity: object;
  /** A Set's or Map's members' texts, and the text before it. */
  parts?: string[];
  saved?: string;
}

class CanonicalWriter {
  private out = '';
  private readonly stack: Frame[] = [];
  private readonly ancestors = new Set<object>();

  write(root: Frame): string {
    const stack = this.stack;
    this.open(root);
    while (stack.length > 0) {
      const frame = stack[stack.length - 1];
      if (frame.index === frame.length) {
        this.close(frame);
        continue;
      }
      const index = frame.index++;
      let child: unknown;
      let key: string | number;
      switch (frame.kind) {
        case Kind.Object:
          key = frame.keys![index];
          child = frame.source[key];
          break;
        case Kind.Array:
          key = index;
          child = frame.source[index];
          break;
        case Kind.Set:
          key = '<member>';
          child = frame.source[index];
          break;
        default:
          key = index % 2 === 0 ? '<key>' : mapLabel(frame.source[index - 1]);
          child = frame.source[index];
      }
      const written = classify(child, key, stack);
      if (frame.parts !== undefined) {
        if (typeof written === 'object') this.open(written);
        else frame.parts.push(written ?? 'undefined');
        continue;
      }
      if (written === undefined) {
        if (frame.kind === Kind.Object) continue;
        this.out += frame.written ? ',null' : 'null';
      } else {
        if (frame.written) this.out += ',';
        if (frame.kind === Kind.Object) this.out += `${JSON.stringify(key)}:`;
        if (typeof written === 'object') this.open(written);
        else this.out += written;
      }
      frame.written = true;
    }
    return this.out;
  }

  private open(frame: Frame): void {
    if (this.ancestors.has(frame.identity)) {
      throw new FingerprintValueError(this.stack, 'holds a circular reference', frame.segment);
    }
    this.ancestors.add(frame.identity);
    this.stack.push(frame);
    if (frame.kind === Kind.Object) this.out += '{';
    else if (frame.kind === Kind.Array) this.out += '[';
    else {
      frame.parts = [];
      frame.saved = this.out;
      this.out = '';
    }
  }

  private close(frame: Frame): void {
    this.stack.pop();
    this.ancestors.delete(frame.identity);
    if (frame.kind === Kind.Object) this.out += '}';
    else if (frame.kind === Kind.Array) this.out += ']';
    else
      this.out = frame.saved! + (frame.kind === Kind.Set ? writeSet(frame.parts!) : writeMap(frame.parts!));
    const parent = this.stack[this.stack.length - 1];
    if (parent?.parts !== undefined) {
      // A Set's or Map's member is done: its text is kept apart, to be sorted.
      parent.parts.push(this.out);
      this.out = '';
    }
  }
}

/** The text of a leaf, `undefined` for what JSON leaves out, or the (unopened) frame of a container. */
function classify(value: unknown, key: string | number, stack: readonly Frame[]): string | undefined | Frame {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return numberText(value, key, stack);
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
  const object = value as object;
  if (Array.isArray(object)) return frameOf(Kind.Array, object, key, object);
  const prototype = Object.getPrototypeOf(object);
  if (prototype !== Object.prototype && prototype !== null) {
    const special = specialForm(object, key, stack);
    if (special !== undefined) return special;
  }
  if (typeof (object as { toJSON?: unknown }).toJSON === 'function') {
    // As JSON.stringify: the value toJSON answers is written, without calling its own toJSON.
    const replaced = (object as { toJSON(key: string): unknown }).toJSON(String(key));
    if (replaced === null || typeof replaced !== 'object') return classify(replaced, key, stack);
    if (Array.isArray(replaced)) return frameOf(Kind.Array, replaced, key, replaced);
    return frameOf(Kind.Object, replaced, key, replaced);
  }
  return frameOf(Kind.Object, object, key, object);
}

function frameOf(kind: Kind, source: any, segment: string | number, identity: object): Frame {
  const keys = kind === Kind.Object ? Object.keys(source).sort() : undefined;
  const length = keys === undefined ? (source as unknown[]).length : keys.length;
  return { kind, source, keys, length, index: 0, written: false, segment, identity };
}

function numberText(value: number, key: string | number, stack: readonly Frame[]): string {
  if (Number.isFinite(value)) {
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
      throw new FingerprintValueError(
        stack,
        `is the integer ${value}, beyond 2^53 where JSON numbers are rounded (two different numbers may read the same)`,
        key,
      );
    }
    return JSON.stringify(value);
  }
  return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
}

/** Object types whose content is not their own enumerable properties: refused, they cannot be compared. */
const OPAQUE_TYPES = new Set([
  'Promise',
  'WeakMap',
  'WeakSet',
  'WeakRef',
  'Error',
  'Generator',
  'AsyncGenerator',
]);

/**
 * The form of an object JSON would blur (a `Set`, `Map`, bytes, a `Date`, a `RegExp`), `undefined`
 * for one written as JSON writes it (a class instance, by its own enumerable properties).
 */
function specialForm(
  object: object,
  key: string | number,
  stack: readonly Frame[],
): string | Frame | undefined {
  const type = Object.prototype.toString.call(object).slice(8, -1);
  switch (type) {
    case 'Object':
    case 'Array':
      return undefined;
    case 'Date': {
      if (Number.isNaN((object as Date).getTime())) {
        throw new FingerprintValueError(stack, 'is an invalid Date (every invalid Date reads the same)', key);
      }
      return JSON.stringify((object as Date).toISOString());
    }
    case 'Set':
      return frameOf(Kind.Set, [...(object as Set<unknown>)], key, object);
    case 'Map':
      return frameOf(Kind.Map, [...(object as Map<unknown, unknown>)].flat(), key, object);
    case 'RegExp':
      return `RegExp(${JSON.stringify(String(object))})`;
    case 'ArrayBuffer':
    case 'SharedArrayBuffer':
      return `${type}(${JSON.stringify(Buffer.from(object as ArrayBuffer).toString('base64'))})`;
    case 'Number':
    case 'String':
    case 'Boolean':
      return classify((object as { valueOf(): unknown }).valueOf(), key, stack) as string;
  }
  if (ArrayBuffer.isView(object)) {
    const bytes = Buffer.from(object.buffer, object.byteOffset, object.byteLength);
    return `${type}(${JSON.stringify(bytes.toString('base64'))})`;
  }
  if (OPAQUE_TYPES.has(type) || object instanceof Error) {
    throw new FingerprintValueError(
      stack,
      `is ${type === 'Error' ? 'an' : 'a'} ${type}, which has no content to compare`,
      key,
    );
  }
  return undefined;
}

/** A Map value's name in errors: its key when that is a string or number. */
function mapLabel(key: unknown): string {
  return typeof key === 'string' || typeof key === 'number' ? String(key) : '<value>';
}

function writeSet(parts: readonly string[]): string {
  return `Set[${[...parts].sort().join(',')}]`;
}

function writeMap(parts: readonly string[]): string {
  const entries: string[] = [];
  for (let i = 0; i < parts.length; i += 2) entries.push(`[${parts[i]},${parts[i + 1]}]`);
  return `Map[${entries.sort().join(',')}]`;
}

/** A value that cannot be fingerprinted, named by its dot path in the fingerprinted value. */
export class FingerprintValueError extends TypeError {
  constructor(stack: readonly Frame[], problem: string, last: string | number) {
    const segments = stack.slice(1).map((frame) => String(frame.segment));
    if (stack.length > 0) segments.push(String(last));
    const path = segments.join('.');
    super(path === '' ? `the value ${problem}` : `the field ${path} ${problem}`);
    this.name = 'FingerprintValueError';
  }
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
