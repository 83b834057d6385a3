import { readOptions } from '../common/known-options';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import {
  CLAIM_OPTION_SHAPE,
  IDEMPOTENCY_DEFAULTS,
  IDEMPOTENT_OPTION_SHAPE,
  IdempotencyClaimOptions,
  IdempotentOptions,
} from './idempotency-options.interface';
import {
  checkIdempotentOptions,
  checkTransactional,
  resolveModuleOptions,
} from './idempotency-options.validation';
import { payloadFingerprinterOf } from './payload-fingerprint';
import { DEFAULT_TTL_LIMITS, MAX_TIMER_DELAY_MS, ttlLimitsFor } from './ttl-limits';

// The checks at bootstrap: each refusal is a sentence that names where the mistake is and what to
// write instead, and each accepted edge value is accepted. Names and kinds are checked first, as
// IdempotencyModule and @Idempotent() do.

/** A store local to the process, with fingerprints: no identity needed, every option allowed. */
class LocalStore {
  readonly shared = false;
  readonly keepsFingerprints = true;
  constructor(readonly maxTtlMs?: number) {}
  runInTransaction() {
    return Promise.resolve();
  }
}

const MODULE = 'IdempotencyModule options';
const noEnv = {};

function resolve(options: IdempotencyClaimOptions, store: object = new LocalStore()) {
  const read = readOptions(options, CLAIM_OPTION_SHAPE, MODULE, IdempotencyConfigurationError);
  return resolveModuleOptions(read, store as never, noEnv, payloadFingerprinterOf);
}

/** The message `resolve` throws, checking it is a configuration error. */
function refusal(options: IdempotencyClaimOptions, store?: object): string {
  try {
    resolve(options, store);
  } catch (error) {
    expect(error).toBeInstanceOf(IdempotencyConfigurationError);
    return (error as Error).message;
  }
  throw new Error(`options ${JSON.stringify(options)} were accepted`);
}

describe('resolveModuleOptions', () => {
  it('applies every default', () => {
    const resolved = resolve({});
    expect(resolved).toEqual({
      keyPath: 'id',
      key: undefined,
      defaultKeySource: true,
      ttl: 86_400_000,
      inProgressTtl: 300_000,
      requireKey: true,
      keyPrefix: 'idempotency',
      heartbeat: false,
      onStoreError: 'fail',
      fingerprint: undefined,
      fingerprinterOf: payloadFingerprinterOf,
      store: { name: 'LocalStore', keepsFingerprints: true, runsTransactions: true },
      identity: { service: undefined, source: 'none' },
      limits: DEFAULT_TTL_LIMITS,
    });
    expect(IDEMPOTENCY_DEFAULTS).toMatchObject({ keyPath: 'id', ttl: 86_400_000, inProgressTtl: 300_000 });
  });

  it('keeps every option given', () => {
    const key = () => 'k';
    const resolved = resolve({
      key,
      ttl: Infinity,
      inProgressTtl: 1,
      requireKey: false,
      keyPrefix: 'p',
      heartbeat: true,
      onStoreError: 'process',
      fingerprint: ['orderId'],
      service: 'billing',
    });
    expect(resolved).toMatchObject({
      keyPath: 'id',
      key,
      defaultKeySource: false,
      ttl: Infinity,
      inProgressTtl: 1,
      requireKey: false,
      keyPrefix: 'p',
      heartbeat: true,
      onStoreError: 'process',
      fingerprint: ['orderId'],
      identity: { service: 'billing', source: 'option' },
    });
    expect(resolve({ keyPath: 'meta.id' })).toMatchObject({ keyPath: 'meta.id', defaultKeySource: false });
    expect(resolve({ fingerprint: false }).fingerprint).toBeUndefined();
  });

  it('reads the service identity from the environment it is given', () => {
    const resolved = resolveModuleOptions({}, { shared: true }, { OTEL_SERVICE_NAME: 'shipping' });
    expect(resolved.identity).toEqual({ service: 'shipping', source: 'OTEL_SERVICE_NAME' });
    expect(() => resolveModuleOptions({}, { shared: true }, {})).toThrow(/has no service identity/);
  });

  it('names the service option, or the variable the service came from, in a refused key segment', () => {
    expect(refusal({ service: 'bill\u0000ing' })).toBe(
      'IdempotencyModule options: service holds the control character U+0000 (NUL) at index 4; it is part of ' +
        'every store key (a Postgres text column cannot hold NUL at all). Use a name of printable characters.',
    );
    expect(() => resolveModuleOptions({}, { shared: true }, { OTEL_SERVICE_NAME: 'ship\nping' })).toThrow(
      'IdempotencyModule options: service (from OTEL_SERVICE_NAME) holds the control character U+000A at index 4;',
    );
  });

  it('treats a store that says nothing of itself as shared, and a call without a store as local', () => {
    expect(() => resolveModuleOptions({}, {}, {})).toThrow(
      /the store given as an object literal is shared with other processes/,
    );
    expect(resolveModuleOptions(undefined, undefined, {}).identity.source).toBe('none');
    expect(resolveModuleOptions().keyPrefix).toBe('idempotency');
  });

  describe('the TTL', () => {
    it('accepts Infinity, the largest whole number of milliseconds, and the smallest positive value', () => {
      expect(resolve({ ttl: Infinity }).ttl).toBe(Infinity);
      expect(resolve({ ttl: Number.MAX_SAFE_INTEGER }).ttl).toBe(Number.MAX_SAFE_INTEGER);
      expect(resolve({ ttl: Number.MIN_VALUE }).ttl).toBe(Number.MIN_VALUE);
    });

    it.each([[0], [-1], [Number.NaN]])('refuses %p, saying what a ttl is', (ttl) => {
      expect(refusal({ ttl: ttl as number })).toBe(
        `${MODULE}: ttl must be a positive number of milliseconds (Infinity to remember keys forever), got ${String(ttl)}.`,
      );
    });

    it('refuses a ttl past 2^53 - 1 ms, saying the limit and why', () => {
      expect(refusal({ ttl: Number.MAX_SAFE_INTEGER + 2 })).toBe(
        `${MODULE}: ttl must be at most 9007199254740991 ms (about 285,421 years): ${DEFAULT_TTL_LIMITS.ttlReason}. Got 9007199254740992.`,
      );
    });

    it("refuses a ttl past the store's maxTtlMs, naming the store, and accepts it at the limit", () => {
      expect(resolve({ ttl: 60_000, inProgressTtl: 1 }, new LocalStore(60_000)).ttl).toBe(60_000);
      expect(resolve({ ttl: Infinity, inProgressTtl: 1 }, new LocalStore(60_000)).ttl).toBe(Infinity);
      expect(refusal({ ttl: 60_001, inProgressTtl: 1 }, new LocalStore(60_000))).toBe(
        `${MODULE}: ttl must be at most 60000 ms (about 1 minutes): the store LocalStore keeps TTLs up to 60000 ms (its maxTtlMs). Got 60001.`,
      );
    });
  });

  describe('the in-progress lease', () => {
    it("accepts Node's longest timer", () => {
      expect(resolve({ inProgressTtl: MAX_TIMER_DELAY_MS }).inProgressTtl).toBe(MAX_TIMER_DELAY_MS);
    });

    it.each([[0], [-5], [Infinity], [Number.NaN]])(
      'refuses %p: a crashed worker’s claim must expire',
      (inProgressTtl) => {
        expect(refusal({ inProgressTtl: inProgressTtl as number })).toBe(
          `${MODULE}: inProgressTtl must be a positive, finite number of milliseconds (a crashed worker's claim must expire), got ${String(inProgressTtl)}.`,
        );
      },
    );

    it("refuses a lease past Node's timer limit, or the store's, saying which and why", () => {
      expect(refusal({ inProgressTtl: MAX_TIMER_DELAY_MS + 1 })).toBe(
        `${MODULE}: inProgressTtl must be at most 2147483647 ms (about 24.8 days): ${DEFAULT_TTL_LIMITS.leaseReason}. Got 2147483648.`,
      );
      expect(refusal({ ttl: 1_000, inProgressTtl: 1_001 }, new LocalStore(1_000))).toBe(
        `${MODULE}: inProgressTtl must be at most 1000 ms (about 1 seconds): the store LocalStore keeps TTLs up to 1000 ms (its maxTtlMs). Got 1001.`,
      );
      expect(resolve({ ttl: 1_000, inProgressTtl: 1_000 }, new LocalStore(1_000)).inProgressTtl).toBe(1_000);
    });
  });

  it.each<[IdempotencyClaimOptions, string]>([
    [{ ttl: '1000' as never }, 'ttl must be a number, got string "1000".'],
    [{ inProgressTtl: false as never }, 'inProgressTtl must be a number, got boolean false.'],
    [{ requireKey: 'yes' as never }, 'requireKey must be true or false, got string "yes".'],
    [{ heartbeat: 1 as never }, 'heartbeat must be true or false, got number 1.'],
    [{ keyPrefix: 5 as never }, 'keyPrefix must be a string, got number 5.'],
    [{ key: 'id' as never }, 'key must be a function, got string "id".'],
  ])('refuses %p, naming the option and its kind', (options, message) => {
    expect(refusal(options)).toBe(`${MODULE}: ${message}`);
  });

  it('refuses an empty keyPrefix', () => {
    expect(refusal({ keyPrefix: '' })).toBe(`${MODULE}: keyPrefix must be a non-empty string.`);
  });

  it('refuses an unknown onStoreError, listing the two policies', () => {
    expect(refusal({ onStoreError: 'retry' as never })).toBe(
      `${MODULE}: onStoreError must be 'fail' or 'process', got retry.`,
    );
  });

  describe('the key source', () => {
    it('refuses keyPath and key together', () => {
      expect(refusal({ keyPath: 'id', key: () => 'k' })).toBe(
        `${MODULE}: give either keyPath or key(), not both.`,
      );
    });

    it('refuses a keyPath that cannot resolve, saying why', () => {
      expect(refusal({ keyPath: '__proto__.x' })).toBe(
        `${MODULE}: key path "__proto__.x" goes through "__proto__", which never resolves (only the payload's own fields are read).`,
      );
      expect(refusal({ keyPath: '' })).toMatch(
        /^IdempotencyModule options: a key path must be a non-empty string/,
      );
    });
  });

  describe('the fingerprint', () => {
    it('refuses it on a store that keeps no fingerprints, naming the store and what to do', () => {
      class PlainStore {
        readonly shared = false;
      }
      expect(refusal({ fingerprint: true }, new PlainStore())).toBe(
        `${MODULE}: fingerprint needs a store that keeps payload fingerprints (keepsFingerprints: true), and the ` +
          'store PlainStore keeps none. The in-memory, Redis, DynamoDB and Postgres stores keep them; have your ' +
          "store's tryAcquire keep its claim argument and say keepsFingerprints (describeIdempotencyStore from " +
          'nestjs-idempotent-sqs/testing checks it), or drop the option.',
      );
      expect(resolve({ fingerprint: false }, new PlainStore()).store).toEqual({
        name: 'PlainStore',
        keepsFingerprints: false,
        runsTransactions: false,
      });
    });

    it('refuses an option that is no fingerprint', () => {
      expect(refusal({ fingerprint: 'fields' as never })).toMatch(
        /^IdempotencyModule options: fingerprint must be true or 'event'/,
      );
    });
  });

  describe("the store's traits", () => {
    it.each([['yes'], [1], [null]])('refuses shared = %p, saying the values it may have', (shared) => {
      expect(refusal({}, { shared, constructor: Object })).toBe(
        `IdempotencyModule: the store given as an object literal has shared = ${String(shared)}; it must be true (other processes use its keys), false (this process only) or absent (treated as shared).`,
      );
    });

    it.each([[0], [-1], ['1000'], [null]])('refuses maxTtlMs = %p', (maxTtlMs) => {
      expect(refusal({}, new LocalStore(maxTtlMs as number))).toBe(
        `IdempotencyModule: the store LocalStore has maxTtlMs = ${String(maxTtlMs)}; it must be a positive number of milliseconds, or absent.`,
      );
    });

    it.each([[0], [-1], [1.5], ['250'], [null]])('refuses maxKeyBytes = %p', (maxKeyBytes) => {
      expect(refusal({}, { shared: false, maxKeyBytes, constructor: Object })).toBe(
        `IdempotencyModule: the store given as an object literal has maxKeyBytes = ${String(maxKeyBytes)}; it must be a positive integer number of bytes, or absent.`,
      );
    });

    it('takes a positive whole number of bytes', () => {
      expect(resolve({}, { shared: false, maxKeyBytes: 1_024 }).store.maxKeyBytes).toBe(1_024);
    });

    it("applies the store's maxTtlMs to the defaults too", () => {
      // The default ttl (24 h) is past a 1-hour store: the app must say what it wants.
      expect(refusal({}, new LocalStore(3_600_000))).toMatch(/ttl must be at most 3600000 ms/);
      expect(resolve({ ttl: 3_600_000 }, new LocalStore(3_600_000)).limits).toEqual(
        ttlLimitsFor(3_600_000, 'LocalStore'),
      );
    });

    it('names a store built from a class by its class, and an object literal as such', () => {
      expect(resolve({}, new LocalStore()).store.name).toBe('LocalStore');
      expect(resolve({}, { shared: false }).store.name).toBe('given as an object literal');
      expect(resolve({}, Object.assign(Object.create(null), { shared: false })).store.name).toBe(
        'given as an object literal',
      );
    });
  });
});

describe('checkIdempotentOptions', () => {
  const where = '@Idempotent() on Orders.onCreated';
  const store = { name: 'LocalStore', keepsFingerprints: true };
  const check =
    (options: IdempotentOptions, limits = DEFAULT_TTL_LIMITS, withStore = store) =>
    () => {
      const read = readOptions(options, IDEMPOTENT_OPTION_SHAPE, where, IdempotencyConfigurationError);
      checkIdempotentOptions(read, where, {
        limits,
        store: withStore,
        fingerprinterOf: payloadFingerprinterOf,
      });
    };

  it('accepts an empty declaration and every valid option', () => {
    expect(check({})).not.toThrow();
    expect(
      check({
        keyPath: 'a.b',
        ttl: Infinity,
        inProgressTtl: MAX_TIMER_DELAY_MS,
        requireKey: false,
        scope: 's',
        fingerprint: true,
        transactional: true,
      }),
    ).not.toThrow();
  });

  it.each<[string, IdempotentOptions, string]>([
    ['both key sources', { keyPath: 'id', key: () => 'k' }, 'give either keyPath or key(), not both.'],
    ['a ttl of 0', { ttl: 0 }, 'ttl must be a positive number of milliseconds'],
    ['an infinite lease', { inProgressTtl: Infinity }, 'inProgressTtl must be a positive, finite number'],
    [
      'a non-boolean requireKey',
      { requireKey: 0 as never },
      'requireKey must be true or false, got number 0.',
    ],
    ['an empty scope', { scope: '' }, 'scope must be a non-empty string.'],
    ['a scope that is no string', { scope: 7 as never }, 'scope must be a string, got number 7.'],
    ['an empty fingerprint', { fingerprint: [] }, 'fingerprint is an empty array'],
    [
      'a non-boolean transactional',
      { transactional: 'yes' as never },
      'transactional must be true or false, got string "yes".',
    ],
  ])('refuses %s, naming the handler', (_, options, message) => {
    expect(check(options)).toThrow(IdempotencyConfigurationError);
    expect(check(options)).toThrow(`${where}: ${message}`);
  });

  it("checks the handler's TTLs against the store's limits", () => {
    const limits = ttlLimitsFor(1_000, 'TinyStore');
    expect(check({ ttl: 1_000, inProgressTtl: 1_000 }, limits)).not.toThrow();
    expect(check({ ttl: 1_001 }, limits)).toThrow(`${where}: ttl must be at most 1000 ms`);
    expect(check({ inProgressTtl: 1_001 }, limits)).toThrow(
      `${where}: inProgressTtl must be at most 1000 ms`,
    );
  });

  it('refuses a fingerprint on a store without fingerprints', () => {
    expect(
      check({ fingerprint: true }, DEFAULT_TTL_LIMITS, { name: 'PlainStore', keepsFingerprints: false }),
    ).toThrow(`${where}: fingerprint needs a store that keeps payload fingerprints`);
    expect(
      check({ fingerprint: false }, DEFAULT_TTL_LIMITS, { name: 'PlainStore', keepsFingerprints: false }),
    ).not.toThrow();
  });
});

describe('checkIdempotentOptions where no fingerprint was declared at bootstrap', () => {
  // The fingerprint code loads only where a fingerprint is declared: a class decorated later has none.
  const where = '@Idempotent() on Late.onCreated';
  const check = (options: IdempotentOptions) => () =>
    checkIdempotentOptions(options, where, {
      limits: DEFAULT_TTL_LIMITS,
      store: { name: 'LocalStore', keepsFingerprints: true },
      fingerprinterOf: undefined,
    });

  it('takes fingerprint: false, which needs no fingerprint code', () => {
    expect(check({ fingerprint: false })).not.toThrow();
  });

  it('refuses a fingerprint, saying to import the class before the app starts', () => {
    expect(check({ fingerprint: true })).toThrow(
      `${where}: fingerprint is declared on a class decorated after the app started (a module loaded lazily?), ` +
        'and the fingerprint code loads at bootstrap where a fingerprint is declared. Import the class before ' +
        'the app starts.',
    );
  });
});

describe('checkTransactional', () => {
  const where = '@Idempotent() on Orders.onCreated';
  const postgres = { name: 'PostgresIdempotencyStore', keepsFingerprints: true, runsTransactions: true };

  it('accepts a store that runs transactions, without heartbeat or fingerprint', () => {
    expect(() => checkTransactional(where, postgres, false, false)).not.toThrow();
  });

  it('refuses a store without transactions, saying which store to use', () => {
    const attempt = () =>
      checkTransactional(where, { name: 'RedisIdempotencyStore', keepsFingerprints: true }, false, false);
    expect(attempt).toThrow(IdempotencyConfigurationError);
    expect(attempt).toThrow(
      `${where}: transactional: true needs a store that runs the handler in a database transaction, and the store ` +
        'RedisIdempotencyStore cannot (it has no runInTransaction). Use PostgresIdempotencyStore from ' +
        'nestjs-idempotent-sqs/postgres on a pg Pool or a connection string (new PostgresIdempotencyStore(pool)), or ' +
        "on typeOrmTransactions(dataSource) for TypeORM, with the handler's tables in the same database; or drop " +
        'transactional to settle the claim after the handler as other stores do.',
    );
  });

  it('refuses heartbeat, saying which option to change', () => {
    expect(() => checkTransactional(where, postgres, true, false)).toThrow(
      `${where}: transactional: true cannot be combined with heartbeat: a transactional claim has no lease to ` +
        'extend (the open transaction holds the key; inProgressTtl bounds how long it may sit idle). Set ' +
        'heartbeat: false in the IdempotencyModule options, or drop transactional.',
    );
  });

  it('refuses a fingerprint, saying how to turn it off', () => {
    expect(() => checkTransactional(where, postgres, false, true)).toThrow(
      `${where}: transactional: true does not keep payload fingerprints yet. Turn fingerprint off for this ` +
        'handler (@Idempotent({ transactional: true, fingerprint: false })), or drop transactional.',
    );
  });
});
