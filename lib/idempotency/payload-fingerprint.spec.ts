import { createHash } from 'node:crypto';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { canonicalJson, fingerprintOf, payloadFingerprinterOf } from './payload-fingerprint';

/** A money type keeping its amount in a `#private` field: JSON sees `{}` of it. */
class Money {
  readonly #cents: number;
  constructor(cents: number) {
    this.#cents = cents;
  }
  get cents(): number {
    return this.#cents;
  }
}

/** A `toJSON` that answers a wrapper holding the instance itself: a walk that follows toJSON never ends. */
class SelfWrapping {
  toJSON(): unknown {
    return { wrapped: this };
  }
}

const deep = (depth: number, leaf: unknown) => {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
};

describe('canonicalJson: plain JSON with sorted keys', () => {
  it('sorts object keys at every depth, so key order never changes the text', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[1,{"y":2,"z":1}]},"b":1}',
    );
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
  });

  it('writes what JSON.stringify writes for plain JSON (here with its keys sorted already)', () => {
    const value = {
      bare: Object.assign(Object.create(null) as object, { k: 'v' }),
      flags: [true, false, null],
      nested: [[1, [2]], [], {}],
      numbers: [-0, 1.5e-7, 0.1, -1.5, 2 ** 53 - 1],
      skipped: undefined,
      text: 'quote " and \u2028 and a lone \ud800',
    };
    expect(canonicalJson(value)).toBe(JSON.stringify(value));
  });

  it('allows one value twice side by side (no cycle)', () => {
    const shared = { x: [1] };
    expect(canonicalJson({ a: { b: shared }, c: [shared, shared] })).toBe(
      '{"a":{"b":{"x":[1]}},"c":[{"x":[1]},{"x":[1]}]}',
    );
  });

  it("writes bytes (a 'base64' body) by their content, in a form no JSON text has", () => {
    expect(canonicalJson({ body: Buffer.from([1, 2]) })).toBe('{"body":Bytes(AQI=)}');
    expect(canonicalJson(new Uint8Array([1, 2]))).toBe(canonicalJson(Buffer.from([1, 2])));
    // A view into a larger buffer is its own bytes only.
    expect(canonicalJson(Buffer.from([9, 1, 2, 9]).subarray(1, 3))).toBe('Bytes(AQI=)');
  });

  it.each<[string, unknown, string]>([
    [
      'undefined in an array',
      { lines: [1, undefined] },
      'the field lines.1 is undefined, which JSON cannot write',
    ],
    ['a hole in an array', { lines: new Array(2) }, 'the field lines.0 is undefined'],
    ['undefined itself', undefined, 'the value is undefined, which JSON cannot write'],
    ['a BigInt', { n: 10n }, 'the field n is the BigInt 10n, which JSON cannot write'],
    ['NaN', { meta: { ratio: Number.NaN } }, 'the field meta.ratio is NaN, which JSON cannot write'],
    ['Infinity', [Infinity], 'the field 0 is Infinity, which JSON cannot write'],
    ['a function', { f: () => 1 }, 'the field f is a function, which JSON cannot write'],
    ['a symbol', { s: Symbol('s') }, 'the field s is a symbol, which JSON cannot write'],
    ['a Date', { due: new Date(0) }, 'the field due is a Date, not plain JSON'],
    ['a class with #private state', { price: new Money(1000) }, 'the field price is a Money, not plain JSON'],
    [
      'URLSearchParams',
      { query: new URLSearchParams('a=1') },
      'the field query is a URLSearchParams, not plain JSON',
    ],
    ['a toJSON holding this', { x: new SelfWrapping() }, 'the field x is a SelfWrapping, not plain JSON'],
    ['a Set', { tags: new Set(['a']) }, 'the field tags is a Set, not plain JSON'],
    [
      'an instance of an anonymous class',
      { item: new (class {})() },
      'the field item is an object of a class, not plain JSON',
    ],
    [
      'an instance of a class whose name is no text',
      { item: new (Object.defineProperty(class {}, 'name', { value: 7 }))() },
      'the field item is an object of a class, not plain JSON',
    ],
    ['a Map', new Map(), 'the value is a Map, not plain JSON'],
    ['a boxed string', { s: new String('x') }, 'the field s is a String, not plain JSON'],
    [
      'an integer JSON rounded',
      { amount: 2 ** 53 + 2 },
      'the field amount is the integer 9007199254740994, beyond 2^53',
    ],
    [
      'a nesting deeper than JSON.stringify writes',
      deep(100_000, 1),
      'the value is nested too deeply to write as JSON',
    ],
  ])('refuses %s, naming the field', (_, value, message) => {
    expect(() => canonicalJson(value)).toThrow(TypeError);
    expect(() => canonicalJson(value)).toThrow(message);
  });

  it("keeps the stack's RangeError as the cause of a nesting too deep to write", () => {
    let thrown: unknown;
    try {
      canonicalJson(deep(100_000, 1));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as Error).cause).toBeInstanceOf(RangeError);
  });

  it('refuses a cycle, through objects and arrays, naming where it closes', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow('the field self holds a circular reference');
    const list: unknown[] = [];
    list.push({ list });
    expect(() => canonicalJson(list)).toThrow(new TypeError('the field 0.list holds a circular reference'));
  });

  it('never calls a toJSON: a value of its own class is refused before', () => {
    const toJSON = jest.fn(() => ({}));
    class Priced {
      toJSON = toJSON;
    }
    expect(() => canonicalJson({ p: new Priced() })).toThrow('the field p is a Priced');
    // On a plain object, toJSON is a member like any other: a function JSON cannot write.
    expect(() => canonicalJson({ p: { toJSON } })).toThrow('the field p.toJSON is a function');
    expect(toJSON).not.toHaveBeenCalled();
  });
});

describe('fingerprintOf', () => {
  it('is the first 96 bits of the SHA-256 of the canonical JSON, 16 characters of base64url', () => {
    const value = { b: [1, 'two'], a: null };
    const digest = createHash('sha256').update('{"a":null,"b":[1,"two"]}').digest();
    expect(fingerprintOf(value)).toBe(digest.subarray(0, 12).toString('base64url'));
    expect(fingerprintOf(value)).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(fingerprintOf({ a: null, b: [1, 'two'] })).toBe(fingerprintOf(value));
  });

  it.each<[string, unknown, unknown]>([
    ['a number and its string', { amount: 5 }, { amount: '5' }],
    ['two amounts', { amount: 1000 }, { amount: 99999 }],
    ['arrays in another order', [1, 2], [2, 1]],
    ['a missing field and a null one', { a: 1 }, { a: 1, b: null }],
    ['a nested key and a dotted one', { a: { b: 1 } }, { 'a.b': 1 }],
    ['bytes and their base64 text', { body: Buffer.from('hi') }, { body: 'aGk=' }],
    ['bytes and their JSON', Buffer.from([1]), { type: 'Buffer', data: [1] }],
    ['two payloads 2,000 levels deep', deep(2_000, 1), deep(2_000, 2)],
  ])('tells apart %s', (_, first, second) => {
    expect(fingerprintOf(first)).not.toBe(fingerprintOf(second));
  });
});

describe('payloadFingerprinterOf', () => {
  const payload = { id: 'e-1', orderId: 'o-1', amount: 5, meta: { sentAt: 't1', trace: 'a' } };

  it('is off for undefined and false', () => {
    expect(payloadFingerprinterOf(undefined, 'here')).toBeUndefined();
    expect(payloadFingerprinterOf(false, 'here')).toBeUndefined();
  });

  it('hashes the whole payload for true and "event"', () => {
    const whole = payloadFingerprinterOf(true, 'here')!;
    expect(whole.source).toBe('the payload');
    expect(whole.of(payload, {})).toBe(fingerprintOf(payload));
    expect(payloadFingerprinterOf('event', 'here')!.of(payload, {})).toBe(whole.of(payload, {}));
    expect(whole.of({ ...payload, meta: { ...payload.meta, sentAt: 't2' } }, {})).not.toBe(
      whole.of(payload, {}),
    );
  });

  it('hashes chosen fields only, each under its path, a missing field unlike a null one', () => {
    const fields = payloadFingerprinterOf(['orderId', 'meta.trace'], 'here')!;
    expect(fields.source).toBe('fields orderId, meta.trace');
    const base = fields.of(payload, {});
    expect(base).toBe(fingerprintOf({ orderId: 'o-1', 'meta.trace': 'a' }));
    expect(fields.of({ ...payload, amount: 9, meta: { ...payload.meta, sentAt: 't2' } }, {})).toBe(base);
    expect(fields.of({ ...payload, meta: { ...payload.meta, trace: 'b' } }, {})).not.toBe(base);
    expect(fields.of({ orderId: 'o-1', meta: {} }, {})).not.toBe(
      fields.of({ orderId: 'o-1', meta: { trace: null } }, {}),
    );
    // Two fields cannot trade values.
    const pair = payloadFingerprinterOf(['a', 'b'], 'here')!;
    expect(pair.of({ a: 2, b: 1 }, {})).not.toBe(pair.of({ a: 1, b: 2 }, {}));
    // Paths are read as keyPath reads keys: own properties only.
    expect(fields.of(Object.create({ orderId: 'o-1' }), {})).toBe(fields.of({}, {}));
  });

  it('hashes what a function returns, given the payload and the context', () => {
    const fn = payloadFingerprinterOf(
      (p: typeof payload, ctx: { queue: string }) => [p.orderId, ctx.queue],
      'here',
    )!;
    expect(fn.source).toBe('fingerprint()');
    expect(fn.of(payload, { queue: 'a' })).toBe(fingerprintOf(['o-1', 'a']));
    expect(fn.of(payload, { queue: 'b' })).not.toBe(fn.of(payload, { queue: 'a' }));
    expect(() => fn.of({ orderId: 1n }, { queue: 'a' })).toThrow('the field 0 is the BigInt 1n');
  });

  it.each([
    ['an empty array', [], /fingerprint is an empty array; list the fields/],
    ['a bad path', ['a..b'], /fingerprint fields: key path "a\.\.b" has an empty or padded segment/],
    ['a path through __proto__', ['__proto__.x'], /goes through "__proto__"/],
    ['a number', 5, /fingerprint must be true or 'event'.*got number 5/],
    ['another string', 'fields', /got string "fields"/],
    ['null', null, /got null\.$/],
  ])('refuses %s, naming where', (_, option, message) => {
    const build = () => payloadFingerprinterOf(option as never, '@Idempotent() on A.b');
    expect(build).toThrow(IdempotencyConfigurationError);
    expect(build).toThrow(/^@Idempotent\(\) on A\.b: /);
    expect(build).toThrow(message);
  });
});
