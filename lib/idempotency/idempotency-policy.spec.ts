import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { IDEMPOTENCY_DEFAULTS, ResolvedIdempotencyOptions } from './idempotency-options.interface';
import { buildIdempotencyPolicy, storeKeyFor } from './idempotency-policy';
import { fingerprintOf, payloadFingerprinterOf } from './payload-fingerprint';
import { MAX_KEY_SEGMENT_BYTES } from './idempotency-key';
import { DEFAULT_TTL_LIMITS } from './ttl-limits';

/** Module options as `resolveModuleOptions` leaves them, with the defaults. */
function moduleOptions(overrides: Partial<ResolvedIdempotencyOptions> = {}): ResolvedIdempotencyOptions {
  return {
    ...IDEMPOTENCY_DEFAULTS,
    defaultKeySource: false,
    store: { name: 'TestStore', keepsFingerprints: true, runsTransactions: true },
    identity: { service: 'billing', source: 'option' },
    limits: DEFAULT_TTL_LIMITS,
    fingerprinterOf: payloadFingerprinterOf,
    ...overrides,
  };
}

const HANDLER = 'Orders.onCreated';
const EVENT = 'order_created';

describe('buildIdempotencyPolicy', () => {
  it('takes the module options when the handler declares none', () => {
    const policy = buildIdempotencyPolicy(moduleOptions({ heartbeat: true }), {}, HANDLER, EVENT);
    expect(policy).toMatchObject({
      handlerName: HANDLER,
      eventType: EVENT,
      scope: EVENT,
      storeKeyPrefix: 'idempotency:billing:order_created:',
      keySource: 'keyPath "id"',
      ttl: IDEMPOTENCY_DEFAULTS.ttl,
      inProgressTtl: IDEMPOTENCY_DEFAULTS.inProgressTtl,
      requireKey: true,
      heartbeat: true,
      onStoreError: 'fail',
      fingerprint: undefined,
      transactional: false,
    });
    expect(policy.resolveKey({ id: 'evt-1' }, undefined)).toBe('evt-1');
  });

  it("lets the handler's options win over the module's", () => {
    const policy = buildIdempotencyPolicy(
      moduleOptions({ onStoreError: 'process', requireKey: true }),
      { ttl: 1_000, inProgressTtl: 2_000, requireKey: false, scope: 'billing-copy' },
      HANDLER,
      EVENT,
    );
    expect(policy).toMatchObject({
      scope: 'billing-copy',
      storeKeyPrefix: 'idempotency:billing:billing-copy:',
      ttl: 1_000,
      inProgressTtl: 2_000,
      requireKey: false,
      onStoreError: 'process',
    });
  });

  it('keeps the service segment out of the key when the app has none, and escapes every segment', () => {
    const policy = buildIdempotencyPolicy(
      moduleOptions({ keyPrefix: 'app:{x}', identity: { service: undefined, source: 'none' } }),
      { scope: 'a:b' },
      HANDLER,
      EVENT,
    );
    expect(policy.storeKeyPrefix).toBe('app%3A{x}:a%3Ab:');
    expect(storeKeyFor(policy, 'k:1')).toBe('app%3A{x}:a%3Ab:k%3A1');
  });

  it("names the scope it checked against the store's longest key: the event type, or the one declared", () => {
    const store = {
      name: 'TinyStore',
      keepsFingerprints: true,
      runsTransactions: true,
      maxKeyBytes: MAX_KEY_SEGMENT_BYTES + 40,
    };
    const longType = 'order_created_in_the_warehouse_of_the_north';
    expect(() => buildIdempotencyPolicy(moduleOptions({ store }), {}, HANDLER, longType)).toThrow(
      new RegExp(
        `^@Idempotent\\(\\) on Orders\\.onCreated \\(scope: the event type "${longType}"\\): the longest store key`,
      ),
    );
    expect(() =>
      buildIdempotencyPolicy(moduleOptions({ store }), { scope: longType }, HANDLER, EVENT),
    ).toThrow(/^@Idempotent\(\) on Orders\.onCreated: the longest store key/);
  });

  describe('the key source', () => {
    it('reads a one-segment keyPath from the payload’s own fields only', () => {
      const { resolveKey } = buildIdempotencyPolicy(
        moduleOptions({ keyPath: 'eventId' }),
        {},
        HANDLER,
        EVENT,
      );
      expect(resolveKey({ eventId: 7 }, undefined)).toBe(7);
      expect(resolveKey({ id: 7 }, undefined)).toBeUndefined();
      expect(resolveKey(Object.create({ eventId: 'inherited' }), undefined)).toBeUndefined();
      expect(resolveKey(null, undefined)).toBeUndefined();
      expect(resolveKey('eventId', undefined)).toBeUndefined();
    });

    it('reads no key from a payload that is not an object, even a field it has of its own', () => {
      // A string's own "length" and indexes are no event's key.
      const byLength = buildIdempotencyPolicy(moduleOptions({ keyPath: 'length' }), {}, HANDLER, EVENT);
      expect(byLength.resolveKey('evt-1', undefined)).toBeUndefined();
      expect(byLength.resolveKey({ length: 5 }, undefined)).toBe(5);
      const byIndex = buildIdempotencyPolicy(moduleOptions({ keyPath: '0' }), {}, HANDLER, EVENT);
      expect(byIndex.resolveKey('evt-1', undefined)).toBeUndefined();
      expect(byIndex.resolveKey(['evt-1'], undefined)).toBe('evt-1');
    });

    it('reads a dotted keyPath through nested fields', () => {
      const { resolveKey, keySource } = buildIdempotencyPolicy(
        moduleOptions(),
        { keyPath: 'metadata.eventId' },
        HANDLER,
        EVENT,
      );
      expect(keySource).toBe('keyPath "metadata.eventId"');
      expect(resolveKey({ metadata: { eventId: 'm-1' } }, undefined)).toBe('m-1');
      expect(resolveKey({ metadata: null }, undefined)).toBeUndefined();
    });

    it('calls key() with the payload and the context', () => {
      const key = jest.fn(
        (payload: { n: number }, context: { queue: string }) => `${context.queue}-${payload.n}`,
      );
      const policy = buildIdempotencyPolicy(moduleOptions(), { key }, HANDLER, EVENT);
      expect(policy.keySource).toBe('key()');
      expect(policy.resolveKey({ n: 3 }, { queue: 'q' })).toBe('q-3');
    });

    it("a handler's own keyPath replaces the module's key(), and its key() the module's keyPath", () => {
      const moduleKey = () => 'from-module';
      const withPath = buildIdempotencyPolicy(
        moduleOptions({ key: moduleKey }),
        { keyPath: 'ref' },
        HANDLER,
        EVENT,
      );
      expect(withPath.keySource).toBe('keyPath "ref"');
      expect(withPath.resolveKey({ ref: 'r-1' }, undefined)).toBe('r-1');
      const withKey = buildIdempotencyPolicy(
        moduleOptions({ keyPath: 'ref' }),
        { key: () => 'from-handler' },
        HANDLER,
        EVENT,
      );
      expect(withKey.resolveKey({ ref: 'r-1' }, undefined)).toBe('from-handler');
    });

    it("uses the module's key() when the handler declares no key source", () => {
      const policy = buildIdempotencyPolicy(
        moduleOptions({ key: () => 'from-module' }),
        { ttl: 5 },
        HANDLER,
        EVENT,
      );
      expect(policy.keySource).toBe('key()');
      expect(policy.resolveKey({ id: 'x' }, undefined)).toBe('from-module');
    });

    it("prefers an envelope's id with the default key source, and falls back to the payload's id", () => {
      const { resolveKey } = buildIdempotencyPolicy(
        moduleOptions({ defaultKeySource: true }),
        {},
        HANDLER,
        EVENT,
      );
      expect(resolveKey({ id: 'inner' }, { envelopeKey: 'envelope-1' })).toBe('envelope-1');
      expect(resolveKey({ id: 'inner' }, { envelopeKey: '' })).toBe('inner');
      expect(resolveKey({ id: 'inner' }, {})).toBe('inner');
    });

    it('marks a key path as chosen unless it is the default one that an envelope id goes before', () => {
      const chosen = (options: Partial<ResolvedIdempotencyOptions>, declared = {}) =>
        buildIdempotencyPolicy(moduleOptions(options), declared, HANDLER, EVENT).keyPath?.chosen;
      expect(chosen({ defaultKeySource: true })).toBe(false);
      expect(chosen({ defaultKeySource: true }, { keyPath: 'orderId' })).toBe(true);
      expect(chosen({ defaultKeySource: false })).toBe(true);
      expect(chosen({ defaultKeySource: false }, { keyPath: 'orderId' })).toBe(true);
    });

    it('ignores the envelope once a key source is set, on the module or on the handler', () => {
      const context = { envelopeKey: 'envelope-1' };
      const onModule = buildIdempotencyPolicy(moduleOptions({ defaultKeySource: false }), {}, HANDLER, EVENT);
      expect(onModule.resolveKey({ id: 'inner' }, context)).toBe('inner');
      const onHandler = buildIdempotencyPolicy(
        moduleOptions({ defaultKeySource: true }),
        { keyPath: 'id' },
        HANDLER,
        EVENT,
      );
      expect(onHandler.resolveKey({ id: 'inner' }, context)).toBe('inner');
    });

    it('refuses a keyPath that cannot work, naming the handler', () => {
      const attempt = () => buildIdempotencyPolicy(moduleOptions(), { keyPath: 'a..b' }, HANDLER, EVENT);
      expect(attempt).toThrow(IdempotencyConfigurationError);
      expect(attempt).toThrow(
        '@Idempotent() on Orders.onCreated: key path "a..b" has an empty or padded segment; write segments joined by single dots, e.g. "metadata.eventId".',
      );
    });

    it('refuses invalid declared options, naming the handler', () => {
      expect(() => buildIdempotencyPolicy(moduleOptions(), { scope: '' }, HANDLER, EVENT)).toThrow(
        '@Idempotent() on Orders.onCreated: scope must be a non-empty string.',
      );
    });
  });

  describe('the payload fingerprint', () => {
    it("uses the module's fingerprint unless the handler sets its own", () => {
      const inherited = buildIdempotencyPolicy(moduleOptions({ fingerprint: true }), {}, HANDLER, EVENT);
      expect(inherited.fingerprint?.source).toBe('the payload');
      const own = buildIdempotencyPolicy(
        moduleOptions({ fingerprint: true }),
        { fingerprint: ['amount'] },
        HANDLER,
        EVENT,
      );
      expect(own.fingerprint?.source).toBe('fields amount');
      expect(own.fingerprint?.of({ amount: 1, note: 'x' }, undefined)).toBe(fingerprintOf({ amount: 1 }));
    });

    it("fingerprint: false on the handler turns off the module's", () => {
      const policy = buildIdempotencyPolicy(
        moduleOptions({ fingerprint: true }),
        { fingerprint: false },
        HANDLER,
        EVENT,
      );
      expect(policy.fingerprint).toBeUndefined();
    });

    it('names where an unusable fingerprint was declared', () => {
      // The module's option is checked when the module resolves; an unchecked one is still named.
      expect(() => buildIdempotencyPolicy(moduleOptions({ fingerprint: [] }), {}, HANDLER, EVENT)).toThrow(
        /^IdempotencyModule options: fingerprint is an empty array/,
      );
      expect(() =>
        buildIdempotencyPolicy(moduleOptions(), { fingerprint: 42 as never }, HANDLER, EVENT),
      ).toThrow(/^@Idempotent\(\) on Orders\.onCreated: fingerprint must be/);
    });

    it('names a fingerprint declared where the fingerprint code was not loaded (a class decorated after the boot)', () => {
      const notLoaded = moduleOptions({ fingerprinterOf: undefined });
      expect(buildIdempotencyPolicy(notLoaded, {}, HANDLER, EVENT).fingerprint).toBeUndefined();
      expect(() => buildIdempotencyPolicy(notLoaded, { fingerprint: true }, HANDLER, EVENT)).toThrow(
        '@Idempotent() on Orders.onCreated: fingerprint is declared on a class decorated after the app started ' +
          '(a module loaded lazily?), and the fingerprint code loads at bootstrap where a fingerprint is declared. ' +
          'Import the class before the app starts.',
      );
    });
  });

  describe('transactional handlers', () => {
    it('are transactional only when declared so', () => {
      expect(
        buildIdempotencyPolicy(moduleOptions(), { transactional: true }, HANDLER, EVENT).transactional,
      ).toBe(true);
      expect(
        buildIdempotencyPolicy(moduleOptions(), { transactional: false }, HANDLER, EVENT).transactional,
      ).toBe(false);
    });

    it('are checked against the store, the heartbeat and the fingerprint', () => {
      expect(() =>
        buildIdempotencyPolicy(
          moduleOptions({ store: { name: 'Plain', keepsFingerprints: true, runsTransactions: false } }),
          { transactional: true },
          HANDLER,
          EVENT,
        ),
      ).toThrow(/^@Idempotent\(\) on Orders\.onCreated: transactional: true needs a store/);
      expect(() =>
        buildIdempotencyPolicy(moduleOptions({ heartbeat: true }), { transactional: true }, HANDLER, EVENT),
      ).toThrow(/cannot be combined with heartbeat/);
      expect(() =>
        buildIdempotencyPolicy(moduleOptions({ fingerprint: true }), { transactional: true }, HANDLER, EVENT),
      ).toThrow(/does not keep payload fingerprints yet/);
      // The same options without transactional build.
      expect(() =>
        buildIdempotencyPolicy(
          moduleOptions({ heartbeat: true, fingerprint: true }),
          { transactional: false },
          HANDLER,
          EVENT,
        ),
      ).not.toThrow();
    });
  });
});
