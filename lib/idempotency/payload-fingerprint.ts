import { createHash } from 'node:crypto';
import { describeValue } from '../common/known-options';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { KeyPath, parseKeyPath, readKeyPath } from './idempotency-key';

// Payload fingerprints: a hash of what an event says, kept with its claim, so a second payload under
// the same key is caught instead of acked as a duplicate. 96 bits of SHA-256 are enough: a fingerprint
// is only compared within one key, so no birthday bound applies.

/** Computes what the fingerprint hashes from the event and the host's context (an `SqsContext` for SQS handlers). */
export type PayloadFingerprintFunction = (event: any, context: any) => unknown;

/** What `fingerprint` hashes: the event (`true`, `'event'`), some fields (dot paths), or what a function returns. */
export type PayloadFingerprintOption = true | 'event' | readonly string[] | PayloadFingerprintFunction;

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

/**
 * SHA-256 of the canonical JSON: 12 bytes as 16 base64url characters (encoded from the bytes, since a
 * slice of the text would keep the whole digest alive in a store that keeps fingerprints in memory).
 */
export function fingerprintOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest().toString('base64url', 0, 12);
}

/**
 * `JSON.stringify`'s text with every object's keys sorted (so key order never changes it), and a form
 * of its own, where no JSON text can be, for what JSON would blur (sets, maps, bytes, non-finite
 * numbers, `BigInt`); refused, naming the field: an invalid `Date`, an unsafe integer, a value of no
 * stable content, a cycle. Iterative, so no depth of nesting overflows the stack.
 */
export function canonicalJson(value: unknown): string {
  const stack: Frame[] = [];
  const ancestors = new Set<object>();
  let written = classify(value, '', stack);
  for (;;) {
    if (typeof written === 'object') {
      if (ancestors.has(written.identity)) {
        throw valueError(stack, 'holds a circular reference', written.segment);
      }
      ancestors.add(written.identity);
      stack.push(written);
    } else if (stack.length === 0) {
      return written ?? 'null';
    } else {
      stack[stack.length - 1].texts.push(written);
    }
    const frame = stack[stack.length - 1];
    const index = frame.texts.length;
    if (index < (frame.keys ?? frame.source).length) {
      const child: unknown = frame.source[frame.keys === undefined ? index : frame.keys[index]];
      written = classify(child, labelOf(frame, index), stack);
    } else {
      stack.pop();
      ancestors.delete(frame.identity);
      written = textOf(frame);
    }
  }
}

const enum Kind {
  Object,
  Array,
  Set,
  Map,
}

/** A container being written: its children's texts are gathered, then joined when the last is in. */
interface Frame {
  readonly kind: Kind;
  /** The object, or the array of the array's items, the Set's members or the Map's keys and values. */
  readonly source: any;
  /** An object's sorted keys. */
  readonly keys?: readonly string[];
  readonly texts: Array<string | undefined>;
  /** The container's name in its parent, for errors (`lines`, `2`). */
  readonly segment: string | number;
  /** The identity cycles are found by. */
  readonly identity: object;
}

/** A child's name in errors: its key or index, `<member>` of a Set, a Map's `<key>` or its key's value. */
function labelOf(frame: Frame, index: number): string | number {
  switch (frame.kind) {
    case Kind.Object:
      return frame.keys![index];
    case Kind.Array:
      return index;
    case Kind.Set:
      return '<member>';
  }
  if (index % 2 === 0) return '<key>';
  const key: unknown = frame.source[index - 1];
  return typeof key === 'string' || typeof key === 'number' ? String(key) : '<value>';
}

/**
 * A closed container's text: JSON's for an object or array; a Set's or Map's members sorted, in a
 * form no JSON text has. Built by `+=`, so that a parent holds its children's text without a copy.
 */
function textOf({ kind, keys, texts }: Frame): string {
  const parts: string[] = [];
  if (kind === Kind.Object) {
    let text = '{';
    for (let i = 0; i < texts.length; i++) {
      if (texts[i] !== undefined)
        text += `${text.length > 1 ? ',' : ''}${JSON.stringify(keys![i])}:` + texts[i];
    }
    return text + '}';
  }
  if (kind === Kind.Array) {
    let text = '[';
    for (let i = 0; i < texts.length; i++) text += (i > 0 ? ',' : '') + (texts[i] ?? 'null');
    return text + ']';
  }
  if (kind === Kind.Set) for (const text of texts) parts.push(text ?? 'undefined');
  else
    for (let i = 0; i < texts.length; i += 2)
      parts.push(`[${texts[i] ?? 'undefined'},${texts[i + 1] ?? 'undefined'}]`);
  return `${kind === Kind.Set ? 'Set' : 'Map'}[${parts.sort().join(',')}]`;
}

/** The text of a leaf, `undefined` for what JSON leaves out, or the (unopened) frame of a container. */
function classify(value: unknown, key: string | number, stack: readonly Frame[]): string | undefined | Frame {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
        throw valueError(
          stack,
          `is the integer ${value}, beyond 2^53 where JSON numbers are rounded (two different numbers may read the same)`,
          key,
        );
      }
      // JSON's text for a finite number; NaN and ±Infinity by name, where JSON would write null.
      return String(value);
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
    return frameOf(Array.isArray(replaced) ? Kind.Array : Kind.Object, replaced, key, replaced);
  }
  return frameOf(Kind.Object, object, key, object);
}

function frameOf(kind: Kind, source: any, segment: string | number, identity: object): Frame {
  const keys = kind === Kind.Object ? Object.keys(source).sort() : undefined;
  return { kind, source, keys, texts: [], segment, identity };
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
        throw valueError(stack, 'is an invalid Date (every invalid Date reads the same)', key);
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
    throw valueError(
      stack,
      `is ${type === 'Error' ? 'an' : 'a'} ${type}, which has no content to compare`,
      key,
    );
  }
  return undefined;
}

/** A value that cannot be fingerprinted, named by its dot path in the fingerprinted value. */
function valueError(stack: readonly Frame[], problem: string, last: string | number): TypeError {
  const path = [...stack.slice(1).map((frame) => frame.segment), ...(stack.length > 0 ? [last] : [])].join(
    '.',
  );
  return new TypeError(path === '' ? `the value ${problem}` : `the field ${path} ${problem}`);
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
