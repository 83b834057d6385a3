import { createHash } from 'node:crypto';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { canonicalJson, fingerprintOf, payloadFingerprinterOf } from './payload-fingerprint';

describe('payload fingerprints', () => {
  describe('canonicalJson', () => {
    it('sorts object keys at every depth, so key order never changes the text', () => {
      expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: 'x' } })).toBe(
        '{"a":{"c":"x","d":[1,{"y":2,"z":1}]},"b":1}',
      );
      expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
    });

    it('writes what JSON.stringify writes for everything else', () => {
      const value = {
        text: 'quote " and \u2028',
        date: new Date(Date.UTC(2026, 0, 2)),
        list: [undefined, () => 1, -0, 1e15, 0.1],
        skipped: undefined,
        fn: () => 1,
        boxed: new Number(3),
        nested: { toJSON: () => ({ y: 1, x: 2 }) },
      };
      expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
      expect(canonicalJson(undefined)).toBe('null');
    });

    it('keeps arrays in order, and tells a BigInt from a number and a string', () => {
      expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
      expect(canonicalJson({ n: 10n })).toBe('{"n":10n}');
      expect(new Set([canonicalJson(10n), canonicalJson(10), canonicalJson('10n')]).size).toBe(3);
    });

    it('refuses a cycle, but not a value seen twice side by side', () => {
      const shared = { a: 1 };
      expect(canonicalJson({ left: shared, right: shared })).toBe('{"left":{"a":1},"right":{"a":1}}');
      const cyclic: Record<string, unknown> = { a: 1 };
      cyclic.self = cyclic;
      expect(() => canonicalJson(cyclic)).toThrow('the field self holds a circular reference');
    });
  });

  describe('fingerprintOf', () => {
    it('is 16 characters of base64url, the same for equal values, different for different ones', () => {
      const fingerprint = fingerprintOf({ orderId: 'o-1', amount: 5 });
      expect(fingerprint).toMatch(/^[A-Za-z0-9_-]{16}$/);
      expect(fingerprintOf({ amount: 5, orderId: 'o-1' })).toBe(fingerprint);
      expect(fingerprintOf({ orderId: 'o-1', amount: 6 })).not.toBe(fingerprint);
      expect(fingerprintOf({ orderId: 'o-1', amount: '5' })).not.toBe(fingerprint);
    });
  });

  describe('payloadFingerprinterOf', () => {
    const event = { id: 'e-1', orderId: 'o-1', amount: 5, meta: { sentAt: 't1', trace: 'a' } };

    it('is off for undefined and false', () => {
      expect(payloadFingerprinterOf(undefined, 'here')).toBeUndefined();
      expect(payloadFingerprinterOf(false, 'here')).toBeUndefined();
    });

    it('hashes the whole event for true and "event"', () => {
      const whole = payloadFingerprinterOf(true, 'here')!;
      expect(whole.source).toBe('the event');
      expect(payloadFingerprinterOf('event', 'here')!.of(event, {})).toBe(whole.of(event, {}));
      expect(whole.of({ ...event, meta: { ...event.meta, sentAt: 't2' } }, {})).not.toBe(whole.of(event, {}));
    });

    it('hashes chosen fields only, a missing field unlike a null one', () => {
      const fields = payloadFingerprinterOf(['orderId', 'meta.trace'], 'here')!;
      expect(fields.source).toBe('fields orderId, meta.trace');
      const base = fields.of(event, {});
      expect(fields.of({ ...event, amount: 9, meta: { ...event.meta, sentAt: 't2' } }, {})).toBe(base);
      expect(fields.of({ ...event, meta: { ...event.meta, trace: 'b' } }, {})).not.toBe(base);
      expect(fields.of({ orderId: 'o-1', meta: {} }, {})).not.toBe(
        fields.of({ orderId: 'o-1', meta: { trace: null } }, {}),
      );
      // Paths are read as keyPath reads keys: own properties only.
      expect(fields.of(Object.create({ orderId: 'o-1' }), {})).toBe(fields.of({}, {}));
    });

    it('hashes what a function returns, given the event and the context', () => {
      const fn = payloadFingerprinterOf(
        (e: typeof event, ctx: { queue: string }) => [e.orderId, ctx.queue],
        'here',
      )!;
      expect(fn.source).toBe('fingerprint()');
      expect(fn.of(event, { queue: 'a' })).toBe(fingerprintOf(['o-1', 'a']));
      expect(fn.of(event, { queue: 'b' })).not.toBe(fn.of(event, { queue: 'a' }));
    });

    it.each([
      ['an empty array', [], /fingerprint is an empty array; list the fields/],
      ['a bad path', ['a..b'], /fingerprint fields: key path "a\.\.b" has an empty or padded segment/],
      ['a path through __proto__', ['__proto__.x'], /goes through "__proto__"/],
      ['a number', 5, /fingerprint must be true or 'event'.*got number 5/],
      ['another string', 'fields', /got string "fields"/],
    ])('refuses %s, naming where', (_, option, message) => {
      const build = () => payloadFingerprinterOf(option as never, '@Idempotent() on A.b');
      expect(build).toThrow(IdempotencyConfigurationError);
      expect(build).toThrow(/^@Idempotent\(\) on A\.b: /);
      expect(build).toThrow(message);
    });
  });
});

describe('payload fingerprints, value by value', () => {
  it.each<[string, unknown, string]>([
    ['true', true, 'true'],
    ['false', false, 'false'],
    ['null', null, 'null'],
    ['a string', 'a"b', '"a\\"b"'],
    ['a number', -1.5, '-1.5'],
    ['a string array', ['a', 'b'], '["a","b"]'],
    ['a boxed string', new String('x'), '"x"'],
    ['a boxed false', new Boolean(false), 'false'],
    ['a boxed number', new Number(2), '2'],
    ['a symbol member', { a: Symbol('s'), b: 1 }, '{"b":1}'],
    ['a symbol item', [Symbol('s')], '[null]'],
    ['an undefined item', [undefined, 1], '[null,1]'],
    ['a top-level function', () => 1, 'null'],
    ['a toJSON that is no function', { toJSON: 1 }, '{"toJSON":1}'],
    ['nested arrays', [[1, [2]], []], '[[1,[2]],[]]'],
    ['an empty object', {}, '{}'],
  ])('writes %s as JSON.stringify would', (_, value, text) => {
    expect(canonicalJson(value)).toBe(text);
  });

  it('gives toJSON the member name or array index, as JSON.stringify does', () => {
    const named = { toJSON: (key: string) => `key:${key}` };
    expect(canonicalJson({ a: named, list: [named] })).toBe('{"a":"key:a","list":["key:0"]}');
    expect(canonicalJson(named)).toBe('"key:"');
    expect(canonicalJson({ a: named })).toBe(JSON.stringify({ a: named }));
  });

  it('allows a value twice on one branch’s siblings, and refuses a cycle through an array', () => {
    const shared = { x: [1] };
    expect(canonicalJson({ a: { b: shared }, c: [shared, shared] })).toBe(
      '{"a":{"b":{"x":[1]}},"c":[{"x":[1]},{"x":[1]}]}',
    );
    const list: unknown[] = [];
    list.push({ list });
    expect(() => canonicalJson(list)).toThrow(new TypeError('the field 0.list holds a circular reference'));
  });

  it('is the first 96 bits of the SHA-256 of the canonical JSON, in base64url', () => {
    const value = { b: [1, 'two'], a: null };
    const digest = createHash('sha256').update('{"a":null,"b":[1,"two"]}').digest();
    expect(fingerprintOf(value)).toBe(digest.subarray(0, 12).toString('base64url'));
    expect(fingerprintOf(value)).toHaveLength(16);
  });

  it.each<[string, unknown, string]>([
    ['null', null, 'got null.'],
    ['an object', { fields: ['a'] }, 'got an object.'],
    ['a symbol', Symbol('s'), 'got symbol Symbol(s).'],
    ['another string', 'fields', 'got string "fields".'],
  ])('names a refused option that is %s', (_, option, ending) => {
    expect(() => payloadFingerprinterOf(option as never, 'IdempotencyModule options')).toThrow(
      "IdempotencyModule options: fingerprint must be true or 'event' (the whole event), an array of dot paths " +
        `(['orderId', 'lines']) or a function (event, context) => value, ${ending}`,
    );
  });

  it('says what an empty field list should be instead', () => {
    expect(() => payloadFingerprinterOf([], 'here')).toThrow(
      "here: fingerprint is an empty array; list the fields that identify the event (['orderId', 'amount']), or use true for the whole event.",
    );
    expect(() => payloadFingerprinterOf([''], 'here')).toThrow(
      'here: fingerprint fields: a key path must be a non-empty string such as "id" or "metadata.eventId", got string "".',
    );
  });

  it('hashes each chosen field under its path, so two fields cannot trade values', () => {
    const fields = payloadFingerprinterOf(['a', 'b'], 'here')!;
    expect(fields.of({ a: 1, b: 2 }, {})).toBe(fingerprintOf({ a: 1, b: 2 }));
    expect(fields.of({ a: 2, b: 1 }, {})).not.toBe(fields.of({ a: 1, b: 2 }, {}));
    expect(payloadFingerprinterOf(['meta.id'], 'here')!.of({ meta: { id: 3 } }, {})).toBe(
      fingerprintOf({ 'meta.id': 3 }),
    );
  });
});

describe('payload fingerprints never give two different payloads one fingerprint', () => {
  const deep = (depth: number, leaf: unknown) => {
    let value: unknown = leaf;
    for (let i = 0; i < depth; i++) value = { a: value };
    return value;
  };

  it.each<[string, unknown, unknown]>([
    ['two Sets', { tags: new Set(['a']) }, { tags: new Set(['b']) }],
    ['a Set and an empty object', { tags: new Set(['a']) }, { tags: {} }],
    ['a Set and an array of its members', new Set([1, 2]), [1, 2]],
    ['two Maps', new Map([['a', 1]]), new Map([['a', 2]])],
    ['a Map and an object of its entries', new Map([['a', 1]]), { a: 1 }],
    ['a Map with an undefined value and an empty Map', new Map([['a', undefined]]), new Map()],
    ['two BigInts', 10n ** 30n, 10n ** 30n + 1n],
    ['a BigInt and its string', 5n, '5n'],
    ['bytes of two types', new Uint8Array([1, 2]), new Int8Array([1, 2])],
    ['two Buffers', Buffer.from('a+b'), Buffer.from('a b')],
    ['a Buffer and what its toJSON writes', Buffer.from([1]), { type: 'Buffer', data: [1] }],
    ['a typed array and an object of its indexes', new Uint8Array([7]), { 0: 7 }],
    ['Infinity and null', Infinity, null],
    ['NaN and null', [Number.NaN], [null]],
    ['two Dates', new Date(0), new Date(1)],
    ['two payloads 2,000 levels deep', deep(2_000, 1), deep(2_000, 2)],
    // Deeper than any recursive walk gets on Node's default stack (the former one: about 4,000 levels).
    ['two payloads 100,000 levels deep', deep(100_000, 1), deep(100_000, 2)],
  ])('%s', (_, first, second) => {
    expect(fingerprintOf(first)).not.toBe(fingerprintOf(second));
  });

  it('keeps what is the same the same: a Set or Map in any order, equal bytes, and JSON as before', () => {
    expect(canonicalJson(new Set([2, 1]))).toBe(canonicalJson(new Set([1, 2])));
    expect(
      canonicalJson(
        new Map([
          ['b', 1],
          ['a', 2],
        ]),
      ),
    ).toBe(
      canonicalJson(
        new Map([
          ['a', 2],
          ['b', 1],
        ]),
      ),
    );
    expect(canonicalJson(Buffer.from([1, 2]))).toBe(canonicalJson(new Uint8Array([1, 2])));
    expect(canonicalJson({ at: new Date(0) })).toBe('{"at":"1970-01-01T00:00:00.000Z"}');
    expect(canonicalJson(deep(3, [1]))).toBe('{"a":{"a":{"a":[1]}}}');
  });

  it.each<[string, unknown, string]>([
    [
      'an invalid Date',
      { meta: { sentAt: new Date('not a date') } },
      'the field meta.sentAt is an invalid Date',
    ],
    [
      'an integer JSON rounded',
      { amount: 2 ** 53 + 2 },
      'the field amount is the integer 9007199254740994, beyond 2^53',
    ],
    [
      'a Promise',
      { lines: [1, Promise.resolve()] },
      'the field lines.1 is a Promise, which has no content to compare',
    ],
    ['an Error', new Error('x'), 'the value is an Error, which has no content to compare'],
    [
      'a member of a Set',
      { tags: new Set([new Date(Number.NaN)]) },
      'the field tags.<member> is an invalid Date',
    ],
    ['a value of a Map', { prices: new Map([['EUR', 2 ** 60]]) }, 'the field prices.EUR is the integer'],
  ])('refuses %s, naming the field', (_, value, message) => {
    expect(() => canonicalJson(value)).toThrow(message);
  });
});
