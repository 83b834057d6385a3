import { IdempotencyConfigurationError } from './idempotency.errors';
import {
  canonicalJson,
  FINGERPRINT_LENGTH,
  fingerprintOf,
  payloadFingerprinterOf,
} from './payload-fingerprint';

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
        list: [undefined, () => 1, Number.NaN, -0, 1e21],
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
      expect(() => canonicalJson(cyclic)).toThrow(/circular reference/);
    });
  });

  describe('fingerprintOf', () => {
    it('is 16 characters of base64url, the same for equal values, different for different ones', () => {
      const fingerprint = fingerprintOf({ orderId: 'o-1', amount: 5 });
      expect(fingerprint).toMatch(new RegExp(`^[A-Za-z0-9_-]{${FINGERPRINT_LENGTH}}$`));
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
      ['another string', 'fields', /got "fields"/],
    ])('refuses %s, naming where', (_, option, message) => {
      const build = () => payloadFingerprinterOf(option as never, '@Idempotent() on A.b');
      expect(build).toThrow(IdempotencyConfigurationError);
      expect(build).toThrow(/^@Idempotent\(\) on A\.b: /);
      expect(build).toThrow(message);
    });
  });
});
