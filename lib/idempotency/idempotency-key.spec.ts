import { createHash } from 'node:crypto';
import {
  describeUnusableKey,
  hashKeyForDisplay,
  parseKeyPath,
  readKeyPath,
  toIdempotencyKey,
} from './idempotency-key';

describe('key paths', () => {
  it('parses dot paths into segments', () => {
    expect(parseKeyPath('id')).toEqual(['id']);
    expect(parseKeyPath('metadata.eventId')).toEqual(['metadata', 'eventId']);
  });

  it.each([
    [undefined, 'must be a non-empty string'],
    ['', 'must be a non-empty string'],
    ['a..b', 'empty or padded segment'],
    ['.a', 'empty or padded segment'],
    ['a. b', 'empty or padded segment'],
    ['__proto__.polluted', 'goes through "__proto__"'],
    ['constructor', 'goes through "constructor"'],
    ['a.prototype', 'goes through "prototype"'],
  ])('explains why %p cannot be a key path', (path, reason) => {
    expect(parseKeyPath(path)).toContain(reason);
  });

  it('reads own properties only', () => {
    const inherited = Object.create({ id: 'from-prototype' }) as object;
    expect(readKeyPath(inherited, ['id'])).toBeUndefined();
    expect(readKeyPath({ a: { b: 'x' } }, ['a', 'b'])).toBe('x');
    expect(readKeyPath({ a: 'scalar' }, ['a', 'length'])).toBeUndefined();
    expect(readKeyPath({ items: ['first'] }, ['items', '0'])).toBe('first');
    expect(readKeyPath(null, ['a'])).toBeUndefined();
    expect(readKeyPath({}, ['toString'])).toBeUndefined();
  });
});

describe('key values', () => {
  it('takes non-empty strings, finite numbers and bigints', () => {
    expect(toIdempotencyKey('evt-1')).toBe('evt-1');
    expect(toIdempotencyKey(42)).toBe('42');
    expect(toIdempotencyKey(-1.5)).toBe('-1.5');
    expect(toIdempotencyKey(2 ** 53 - 1)).toBe('9007199254740991');
    expect(toIdempotencyKey(12345678901234567890n)).toBe('12345678901234567890');
  });

  it.each([[''], [NaN], [Infinity], [2 ** 53], [true], [null], [undefined], [{}], [[]], [() => 'k']])(
    'refuses %p',
    (value) => {
      expect(toIdempotencyKey(value)).toBeUndefined();
      expect(describeUnusableKey(value)).toMatch(/^is /);
    },
  );

  it('hashes long keys and keys with control characters or lone surrogates, keeping distinct keys distinct', () => {
    const hashed = [
      toIdempotencyKey('x'.repeat(201)),
      toIdempotencyKey('x'.repeat(202)),
      toIdempotencyKey('tab\there'),
      toIdempotencyKey('del\u007f'),
      toIdempotencyKey('c1\u0085'),
      toIdempotencyKey('\ud800'),
      toIdempotencyKey('\udc00'),
    ];
    for (const key of hashed) expect(key).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(new Set(hashed).size).toBe(hashed.length);
    expect(toIdempotencyKey('x'.repeat(200))).toBe('x'.repeat(200));
    expect(toIdempotencyKey('emoji 🎉 pairs are fine')).toBe('emoji 🎉 pairs are fine');
    expect(toIdempotencyKey('x'.repeat(201))).toBe(hashed[0]);
  });

  it('hashes a key that looks hashed, so no producer can forge the key of another event', () => {
    const long = toIdempotencyKey('x'.repeat(201))!;
    const forged = toIdempotencyKey(long);
    expect(forged).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(forged).not.toBe(long);
    expect(toIdempotencyKey('sha256')).toBe('sha256');
  });
});

describe('why a key is unusable', () => {
  it.each<[unknown, string]>([
    [undefined, 'is missing'],
    ['', 'is an empty string'],
    [
      2 ** 53,
      'is the integer 9007199254740992, beyond 2^53 where JSON numbers lose precision (send it as a string)',
    ],
    [Number.NaN, 'is NaN, not a finite number'],
    [-Infinity, 'is -Infinity, not a finite number'],
    [null, 'is null, not a string or a number'],
    [[1], 'is an array, not a string or a number'],
    [{ id: 1 }, 'is an object, not a string or a number'],
    [true, 'is boolean true, not a string or a number'],
  ])('the key %p %s', (value, reason) => {
    expect(describeUnusableKey(value)).toBe(reason);
  });

  it('says how to write a key path', () => {
    expect(parseKeyPath(7)).toBe(
      'a key path must be a non-empty string such as "id" or "metadata.eventId", got number 7',
    );
    expect(parseKeyPath(null)).toBe(
      'a key path must be a non-empty string such as "id" or "metadata.eventId", got null',
    );
    expect(parseKeyPath('a. b')).toBe(
      'key path "a. b" has an empty or padded segment; write segments joined by single dots, e.g. "metadata.eventId"',
    );
    expect(parseKeyPath('a.constructor')).toBe(
      'key path "a.constructor" goes through "constructor", which never resolves (only the payload\'s own fields are read)',
    );
  });
});

describe('hashKeyForDisplay (hashKeys)', () => {
  it('shows a key as h: and the first 16 hex digits of its SHA-256: an operator who knows a key can find its records', () => {
    const key = 'idempotency:billing:order_created:e1';
    const shown = hashKeyForDisplay(key);
    expect(shown).toBe(`h:${createHash('sha256').update(key).digest('hex').slice(0, 16)}`);
    expect(hashKeyForDisplay(key)).toBe(shown);
    expect(hashKeyForDisplay(`${key}0`)).not.toBe(shown);
  });
});
