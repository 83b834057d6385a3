import fc from 'fast-check';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { MAX_KEY_SEGMENT_BYTES } from './idempotency-key';
import {
  checkKeyName,
  checkLongestKey,
  escapeKeySegment,
  escapePrefixSegment,
  STORE_KEY_SEPARATOR,
  storeKeyOf,
  storeKeyPrefixOf,
} from './store-key';

type Tuple = [prefix: string, service: string | undefined, scope: string, key: string];

// Few, nasty units, so that random tuples often differ only in where a separator-like character
// sits: that is where a naive join collides.
const unit = fc.constantFrom(
  ':',
  '{',
  '}',
  '%',
  '\\',
  'a',
  'é',
  '😀',
  '\ud800',
  '\udc00',
  '\ufffd',
  '%3A',
  'u',
);
const segment = fc.string({ unit, maxLength: 5 });
const tuple: fc.Arbitrary<Tuple> = fc.tuple(
  segment,
  fc.option(segment, { nil: undefined }),
  segment,
  segment,
);

const encode = ([prefix, service, scope, key]: Tuple) =>
  storeKeyOf(storeKeyPrefixOf(prefix, service, scope), key);
// Stores write keys as UTF-8: compare what reaches them, where a lone surrogate becomes U+FFFD.
const bytesOf = (text: string) => Buffer.from(text, 'utf8').toString('hex');
const sameTuple = (a: Tuple, b: Tuple) => a.every((part, i) => part === b[i]);

/**
 * Pairs of tuples likely to collide under a flawed encoding: the same text cut at other places
 * (what a naive join confuses), the same text with its lone surrogates made U+FFFD (what UTF-8
 * confuses), or two unrelated tuples.
 */
const pairs: fc.Arbitrary<[Tuple, Tuple]> = tuple.chain((a) =>
  fc.oneof(
    fc.constant<[Tuple, Tuple]>([a, a]),
    resplit(a).map((b): [Tuple, Tuple] => [a, b]),
    fc.constant<[Tuple, Tuple]>([a, a.map((part) => part?.replace(/[\ud800-\udfff]/g, '\ufffd')) as Tuple]),
    tuple.map((b): [Tuple, Tuple] => [a, b]),
  ),
);

/** The tuple's parts joined with ":", cut again into as many parts at other ":" (or kept). */
function resplit(a: Tuple): fc.Arbitrary<Tuple> {
  const parts = a.filter((part): part is string => part !== undefined);
  const text = parts.join(':');
  const colons = [...text.matchAll(/:/g)].map((match) => match.index!);
  return fc
    .shuffledSubarray(colons, { minLength: parts.length - 1, maxLength: parts.length - 1 })
    .map((cuts) => {
      const sorted = [...cuts].sort((x, y) => x - y);
      const pieces = [-1, ...sorted, text.length]
        .slice(1)
        .map((end, i, ends) => text.slice((i === 0 ? -1 : ends[i - 1]) + 1, end));
      return (a[1] === undefined ? [pieces[0], undefined, pieces[1], pieces[2]] : pieces) as Tuple;
    });
}

/** Distinct tuples never give one store key, as the store sees it. */
const injective = (encoder: (tuple: Tuple) => string) =>
  fc.property(pairs, ([a, b]) => sameTuple(a, b) || bytesOf(encoder(a)) !== bytesOf(encoder(b)));

describe('store keys', () => {
  it('never give two distinct (prefix, service, scope, key) tuples one key', () => {
    fc.assert(injective(encode), { numRuns: 20_000 });
  });

  it('keep a tuple apart from any other that shares its characters, in every split', () => {
    // Exhaustive over short strings: every way of cutting one text into the four segments.
    const text = 'a:{%}';
    const keys = new Map<string, string>();
    for (let i = 0; i <= text.length; i++) {
      for (let j = i; j <= text.length; j++) {
        for (let k = j; k <= text.length; k++) {
          for (const service of [text.slice(i, j), undefined]) {
            const parts: Tuple = [text.slice(0, i), service, text.slice(j, k), text.slice(k)];
            const key = bytesOf(encode(parts));
            const label = JSON.stringify(parts);
            const clash = keys.get(key);
            if (clash !== undefined && clash !== label) throw new Error(`${clash} and ${label} share ${key}`);
            keys.set(key, label);
          }
        }
      }
    }
  });

  it('the property catches the naive join it replaced', () => {
    const naive = ([prefix, service, scope, key]: Tuple) =>
      [prefix, ...(service === undefined ? [] : [service]), scope, key].join(':');
    expect(() => fc.assert(injective(naive), { numRuns: 20_000 })).toThrow(/Property failed/);
  });

  it('reads as the tuple when nothing needs escaping', () => {
    expect(encode(['idempotency', 'billing', 'order_created', 'evt-1'])).toBe(
      'idempotency:billing:order_created:evt-1',
    );
    expect(encode(['idempotency', undefined, 'order_created', 'evt-1'])).toBe(
      'idempotency:order_created:evt-1',
    );
    expect(encode(['idempotency', 'billing', 'order.created', 'Zoë 😀 \\ 42'])).toBe(
      'idempotency:billing:order.created:Zoë 😀 \\ 42',
    );
  });

  it('escapes separators, braces, percent signs and lone surrogates', () => {
    expect(encode(['idempotency', 'svc', 'order:created', 'x:z'])).toBe(
      'idempotency:svc:order%3Acreated:x%3Az',
    );
    expect(escapeKeySegment('50%{a}')).toBe('50%25%7Ba%7D');
    expect(escapeKeySegment('\ud800x\udc00')).toBe('%uD800x%uDC00');
    expect(escapeKeySegment('\ud83d\ude00')).toBe('\ud83d\ude00');
  });

  it('lets no producer pick a Redis Cluster hash slot; a {tag} in the prefix is the operator’s choice', () => {
    // Redis Cluster hashes only what sits between the first "{" and the next "}", when not empty.
    const hashTagOf = (key: string) => {
      const open = key.indexOf('{');
      const close = open < 0 ? -1 : key.indexOf('}', open + 1);
      return close > open + 1 ? key.slice(open + 1, close) : undefined;
    };
    expect(hashTagOf(encode(['idempotency', '{svc}', '{scope}', '{pinned}']))).toBeUndefined();
    expect(hashTagOf(encode(['{orders}', 'svc', 'scope', '{pinned}']))).toBe('orders');
  });

  it('returns a plain key as it is', () => {
    const key = '2774478a-5720-4efe-bff8-5d2535f73187';
    expect(escapeKeySegment(key)).toBe(key);
  });
});

describe('store key escaping at the edges of the surrogate ranges', () => {
  it.each([
    ['\ud800\udc00', 'the first pair (U+10000)'],
    ['\udbff\udfff', 'the last pair (U+10FFFF)'],
    ['a\ud83d\ude00:', 'a pair before a separator'],
  ])('keeps %p (%s) as it is', (pair) => {
    expect(escapeKeySegment(pair)).toBe(pair.replace(':', '%3A'));
  });

  it.each([
    ['\ud800', '%uD800'],
    ['\udbff', '%uDBFF'],
    ['\udc00', '%uDC00'],
    ['\udfff', '%uDFFF'],
    ['\udbff!', '%uDBFF!'],
    ['\udc00\ud800', '%uDC00%uD800'],
    ['\ud800\ud800\udc00', '%uD800\ud800\udc00'],
    ['{\ud7ff}', '%7B\ud7ff%7D'],
    ['\ue000', '\ue000'],
    // Past the surrogates, on the slow path (a separator in the segment): kept as they are.
    ['\ue000:\uffff', '\ue000%3A\uffff'],
  ])('escapes the lone surrogates of %p, and nothing next to them', (segment, escaped) => {
    expect(escapeKeySegment(segment)).toBe(escaped);
  });

  it('escapes the prefix like a segment, keeping its braces', () => {
    expect(escapePrefixSegment('{tag}')).toBe('{tag}');
    expect(escapePrefixSegment('{tag}:50%\udfff')).toBe('{tag}%3A50%25%uDFFF');
    expect(escapePrefixSegment('a\ud800')).toBe('a%uD800');
    expect(storeKeyPrefixOf('{p}', '{s}', '{c}')).toBe('{p}:%7Bs%7D:%7Bc%7D:');
    expect(storeKeyPrefixOf('p', undefined, 's')).toBe('p:s:');
    expect(storeKeyOf('p:s:', '{k}')).toBe('p:s:%7Bk%7D');
    expect(STORE_KEY_SEPARATOR).toBe(':');
  });
});

// The start-up checks of the names in every store key: a name the backend cannot take would send every
// record to the dead-letter queue while the app looks healthy.
describe('checkKeyName', () => {
  const where = 'IdempotencyModule options';

  it('takes a printable name (any script), or none', () => {
    expect(() => checkKeyName('billing-v2 ü 請求', 'service', where)).not.toThrow();
    expect(() => checkKeyName(undefined, 'service', where)).not.toThrow();
  });

  it('refuses an empty name', () => {
    expect(() => checkKeyName('', 'keyPrefix', where)).toThrow(
      new IdempotencyConfigurationError(`${where}: keyPrefix must be a non-empty string.`),
    );
  });

  it.each([
    ['NUL', 'bill\u0000ing', 'U+0000 (NUL) at index 4'],
    ['a newline', 'billing\n', 'U+000A at index 7'],
    ['DEL', '\u007fbilling', 'U+007F at index 0'],
    ['a C1 control', 'bill\u009bing', 'U+009B at index 4'],
  ])('refuses %s, naming its code point and where it is', (_, name, said) => {
    expect(() => checkKeyName(name, 'service', where)).toThrow(
      new IdempotencyConfigurationError(
        `${where}: service holds the control character ${said}; it is part of every store key (a Postgres ` +
          'text column cannot hold NUL at all). Use a name of printable characters.',
      ),
    );
  });
});

describe('checkLongestKey', () => {
  const where = 'IdempotencyModule options';
  const refusal = (names: Parameters<typeof checkLongestKey>[0], maxKeyBytes: number): string => {
    try {
      checkLongestKey(names, { name: 'TinyStore', maxKeyBytes }, where);
    } catch (error) {
      expect(error).toBeInstanceOf(IdempotencyConfigurationError);
      return (error as Error).message;
    }
    throw new Error(`${JSON.stringify(names)} fit in ${maxKeyBytes} bytes`);
  };
  // `idempotency:billing::` (21 bytes), then a key of up to MAX_KEY_SEGMENT_BYTES.
  const names = { keyPrefix: 'idempotency', service: 'billing' };
  const longest = 21 + MAX_KEY_SEGMENT_BYTES;

  it('takes names whose longest key fits to the byte, and any names on a store without a limit', () => {
    expect(() => checkLongestKey(names, { name: 'TinyStore', maxKeyBytes: longest }, where)).not.toThrow();
    expect(() =>
      checkLongestKey({ keyPrefix: 'x'.repeat(10_000), service: undefined }, { name: 'Unbounded' }, where),
    ).not.toThrow();
  });

  it('refuses one byte more, saying each size and by how much to shorten the longest name', () => {
    expect(refusal(names, longest - 1)).toBe(
      `${where}: the longest store key this builds is ${longest} bytes (keyPrefix 11, service 7, escaped, and a ` +
        `key of up to ${MAX_KEY_SEGMENT_BYTES}), and the store TinyStore takes keys of at most ${longest - 1} ` +
        'bytes: every record would fail on its key. Shorten keyPrefix by at least 1 bytes.',
    );
  });

  it('names the longest name wherever it stands, and counts the scope and the escapes', () => {
    const withScope = { keyPrefix: 'i', service: 'billing', scope: 'orders:v2' }; // i:billing:orders%3Av2:
    expect(refusal(withScope, 100)).toBe(
      `${where}: the longest store key this builds is ${22 + MAX_KEY_SEGMENT_BYTES} bytes (keyPrefix 1, ` +
        `service 7, scope 9, escaped, and a key of up to ${MAX_KEY_SEGMENT_BYTES}), and the store TinyStore ` +
        `takes keys of at most 100 bytes: every record would fail on its key. Shorten scope by at least ` +
        `${22 + MAX_KEY_SEGMENT_BYTES - 100} bytes.`,
    );
    expect(refusal({ keyPrefix: 'i', service: 'billing-and-invoicing' }, 600)).toMatch(
      /\(keyPrefix 1, service 21, escaped, .* Shorten service by at least 25 bytes\.$/,
    );
  });

  it('leaves out a service there is none of', () => {
    expect(refusal({ keyPrefix: 'idempotency', service: undefined }, 600)).toMatch(
      /is 613 bytes \(keyPrefix 11, escaped, .* Shorten keyPrefix by at least 13 bytes\.$/,
    );
  });
});
