import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { inspect as show } from 'node:util';
import {
  AcquireResult,
  FingerprintClaim,
  FingerprintedAcquireAnswer,
  IdempotencyStore,
} from '../stores/idempotency-store.interface';

/** The four functions of a test runner the kit registers its cases with. */
export interface StoreConformanceRunner {
  describe(name: string, body: () => void): unknown;
  it(name: string, body: () => Promise<void>): unknown;
  beforeEach(body: () => Promise<void>): unknown;
  afterEach(body: () => Promise<void>): unknown;
}

/** What a factory may return instead of a bare store: the store plus ways to drive it. */
export interface IdempotencyStoreFixture {
  /** The store under test. */
  store: IdempotencyStore;
  /** Moves the store's fake clock forward. Without it, the expiry cases wait out short real TTLs. */
  advanceTime?(ms: number): void | Promise<void>;
  /** More clients of the same backing data, to spread the concurrent claimers over as in production. */
  peers?: IdempotencyStore[];
  /** Called after each case: close connections, drop tables. */
  dispose?(): void | Promise<void>;
}

/** Builds a fresh store (or fixture) for each case. */
export type IdempotencyStoreFactory = () =>
  IdempotencyStore | IdempotencyStoreFixture | Promise<IdempotencyStore | IdempotencyStoreFixture>;

/** Options of {@link describeIdempotencyStore}. */
export interface DescribeIdempotencyStoreOptions {
  /** The runner's functions. Default: the globals `describe`, `it`, `beforeEach`, `afterEach`. */
  runner?: StoreConformanceRunner;
  /** The store has `extend` (the lease heartbeat): check it. Default `true`. */
  extend?: boolean;
  /** The store has `inspect` (the Idempotency Center's read-only key lookup): check it. Default `true`. */
  inspect?: boolean;
  /** The store keeps payload fingerprints (`keepsFingerprints`, `tryAcquire`'s `claim`): check it. Default `true`. */
  fingerprints?: boolean;
  /** The store has the batch methods (`tryAcquireMany`, `markCompleteMany`): check them. Default `true`. */
  batches?: boolean;
  /** Number of concurrent claimers of one key. Default 100. */
  concurrency?: number;
  /**
   * The short TTL (ms) of the expiry cases, waited out in real time without `advanceTime`; raise it
   * for stores whose expiry is coarse. Default 50. A case that fails after a pause as long (a loaded
   * machine) runs again with a 4x longer one, at most twice.
   */
  shortTtlMs?: number;
}

/** A TTL no case outlives. */
export const LONG_TTL = 60_000;

/**
 * What the conformance kit's groups of cases share: the runner, the fixture of the current case,
 * fresh keys, time, and the assertions they all make.
 */
export class KitCaseContext {
  fixture?: IdempotencyStoreFixture;
  readonly concurrency: number;
  /** The optional parts the store has (and the kit checks). */
  readonly has: Record<'extend' | 'inspect' | 'fingerprints' | 'batches', boolean>;
  /** The current attempt's short TTL: read it when the case runs (a retry in real time raises it). */
  shortTtl: number;
  private readonly baseShortTtl: number;
  private readonly runId: string;
  private keyCount = 0;
  // In real time, a case asserts that a short TTL has not run out yet only between two `elapse`
  // calls. The longest such stretch tells whether a failure may be the machine's pause rather
  // than the store's answer.
  private stretchStart = 0;
  private longestStretch = 0;

  constructor(
    private readonly runner: StoreConformanceRunner,
    options: DescribeIdempotencyStoreOptions,
  ) {
    this.concurrency = options.concurrency ?? 100;
    this.shortTtl = this.baseShortTtl = options.shortTtlMs ?? 50;
    this.runId = `conformance:${randomUUID()}:`;
    const parts = ['extend', 'inspect', 'fingerprints', 'batches'] as const;
    this.has = Object.fromEntries(
      parts.map((part) => [part, options[part] !== false]),
    ) as KitCaseContext['has'];
  }

  /** Long enough past a short TTL that any store has let it go, however it rounds. */
  get pastShortTtl(): number {
    return this.shortTtl * 2 + 20;
  }

  readonly describe = (name: string, body: () => void) => this.runner.describe(name, body);

  /**
   * Registers a case. On a fake clock it runs once. In real time, a failure after a stretch at
   * least as long as the short TTL proves nothing (a loaded machine paused the case long enough for
   * its lease to run out): the case runs again with a 4x longer short TTL, at most twice. A store
   * that is wrong fails at every TTL. Each attempt gets a fresh key.
   */
  readonly it = (name: string, body: (key: string) => Promise<void>) =>
    this.runner.it(name, async () => {
      for (let attempt = 0; ; attempt++) {
        this.shortTtl = this.baseShortTtl * 4 ** attempt;
        this.stretchStart = Date.now();
        this.longestStretch = 0;
        try {
          return await body(this.freshKey());
        } catch (error) {
          this.endStretch();
          if (this.fakeClock || this.longestStretch < this.shortTtl || attempt === 2) throw error;
        }
      }
    });

  /** The store under test (of the current case), each call checked ({@link checked}). */
  readonly store = (): IdempotencyStore => checked(this.fixture!.store);
  /** The store and its peers, to spread concurrent callers over. */
  readonly stores = (): IdempotencyStore[] =>
    [this.fixture!.store, ...(this.fixture!.peers ?? [])].map(checked);
  /** `call` from `concurrency` concurrent callers at once, spread over the store and its peers. */
  readonly concurrently = <T>(call: (store: IdempotencyStore, index: number) => Promise<T>) => {
    const stores = this.stores();
    return Promise.all(
      Array.from({ length: this.concurrency }, (_, i) => call(stores[i % stores.length], i)),
    );
  };
  readonly freshKey = () => `${this.runId}${++this.keyCount}`;
  readonly freshKeys = (count: number) => Array.from({ length: count }, this.freshKey);

  get fakeClock(): boolean {
    return this.fixture?.advanceTime !== undefined;
  }

  readonly elapse = async (ms: number): Promise<void> => {
    if (this.fixture!.advanceTime) return this.fixture!.advanceTime(ms);
    this.endStretch();
    await new Promise((resolve) => setTimeout(resolve, ms));
    this.stretchStart = Date.now();
  };

  private endStretch(): void {
    this.longestStretch = Math.max(this.longestStretch, Date.now() - this.stretchStart);
  }

  /**
   * Asserts what a new attempt's `tryAcquire` of `key` answers, with `fingerprint` a claim with it;
   * returns the attempt's token.
   */
  readonly expectAnswer = async (
    key: string,
    expected: AcquireResult,
    why: string,
    ttlMs = LONG_TTL,
    fingerprint?: FingerprintClaim,
  ): Promise<string> => {
    const token = randomUUID();
    const answer =
      fingerprint === undefined
        ? await this.store().tryAcquire(key, ttlMs, token)
        : (await this.answerWith(key, fingerprint, this.store(), ttlMs, token)).result;
    assert.equal(answer, expected, `${why}: tryAcquire answered ${show(answer)}, expected ${expected}`);
    return token;
  };

  /** Claims a fresh key (it must answer ACQUIRED), with a payload fingerprint if given; returns the owner's token. */
  readonly claim = (key: string, ttlMs = LONG_TTL, fingerprint?: FingerprintClaim): Promise<string> =>
    this.expectAnswer(key, AcquireResult.ACQUIRED, 'a fresh key', ttlMs, fingerprint);

  /** Claims a fresh key for `leaseMs` and completes it for `ttlMs`; returns the owner's token. */
  readonly complete = async (key: string, ttlMs = LONG_TTL, leaseMs = LONG_TTL): Promise<string> => {
    const token = await this.claim(key, leaseMs);
    await this.expectCompletion(key, token, 'markComplete by the owner', ttlMs);
    return token;
  };

  readonly markComplete = (key: string, token: string, ttlMs = LONG_TTL) =>
    this.store().markComplete(key, ttlMs, token);

  /** Asserts that `token`, which owns `key`, completes it. */
  readonly expectCompletion = async (key: string, token: string, what: string, ttlMs = LONG_TTL) =>
    expectKept(await this.markComplete(key, token, ttlMs), what);

  /** The store's `extend`, for `token`. */
  readonly extend = (key: string, token: string, ttlMs = LONG_TTL): Promise<boolean> =>
    this.store().extend!(key, ttlMs, token);

  /** Asserts that `token`, which does not own `key`, can neither complete, release nor extend it. */
  readonly expectRefused = async (key: string, token: string, who: string) => {
    expectLost(await this.markComplete(key, token), `markComplete by ${who}`);
    expectLost(await this.store().forget(key, token), `forget by ${who}`);
    if (this.has.extend) expectLost(await this.extend(key, token), `extend by ${who}`);
  };

  /** What `tryAcquire` with `claim` answers, as `{ result, fingerprint?, messageId? }` with what the holding claim kept. */
  readonly answerWith = async (
    key: string,
    claim: FingerprintClaim,
    store = this.store(),
    ttlMs = LONG_TTL,
    token = randomUUID(),
  ): Promise<FingerprintedAcquireAnswer> => {
    assert.equal(
      store.keepsFingerprints,
      true,
      'the store does not say keepsFingerprints: true; pass { fingerprints: false } to describeIdempotencyStore ' +
        'if it keeps no payload fingerprints (the module then refuses fingerprint options with it)',
    );
    const answer = await store.tryAcquire(key, ttlMs, token, claim);
    const { result, fingerprint, messageId } =
      typeof answer === 'object' ? answer : ({ result: answer } as FingerprintedAcquireAnswer);
    // Absent, undefined and null all say that the holding claim kept none.
    return { result, ...(fingerprint != null && { fingerprint }), ...(messageId != null && { messageId }) };
  };

  /**
   * Asserts what a new attempt's `tryAcquire` with a claim (`probe`, by default a fingerprint of its
   * own) answers: `result`, and the fingerprint and message id the holding claim kept.
   */
  readonly expectHeld = async (
    key: string,
    result: AcquireResult,
    held: Partial<FingerprintClaim>,
    why: string,
    probe: FingerprintClaim = { fingerprint: `probe${Math.random().toString(36).slice(2, 10)}` },
  ) => {
    const answer = await this.answerWith(key, probe);
    assert.deepEqual(answer, { result, ...held }, `${why}: tryAcquire with a claim answered ${show(answer)}`);
  };
}

export const expectKept = (result: boolean | void, what: string) =>
  assert.notEqual(result, false, `${what} answered false (claim lost) for the attempt that owns the key`);

export const expectLost = (result: boolean | void, what: string) =>
  assert.equal(result, false, `${what} must answer false for an attempt that does not own the key`);

/** The index of the one ACQUIRED answer among concurrent claimers; an assertion failure unless exactly one. */
export function onlyWinner(answers: AcquireResult[], claimers = 'claimers'): number {
  const winners = answers.flatMap((answer, index) => (answer === AcquireResult.ACQUIRED ? [index] : []));
  assert.equal(winners.length, 1, `${winners.length} ${claimers} got ACQUIRED`);
  return winners[0];
}

const isResult = (answer: unknown) => Object.values<unknown>(AcquireResult).includes(answer);
const isOwnership = (answer: unknown) => answer === true || answer === false || answer === undefined;
const textOrAbsent = (value: unknown) => value == null || typeof value === 'string';
/** A batch method's answers: an array with one allowed answer per entry, in order. */
const eachOf =
  (allowed: (answer: unknown) => boolean) =>
  (answers: unknown, [batch]: unknown[]) =>
    Array.isArray(answers) && answers.length === (batch as unknown[]).length && answers.every(allowed);

/** A held claim's answer: `{ result, fingerprint?, messageId? }`. */
function isHeldClaim(answer: unknown): boolean {
  const { result, fingerprint, messageId } = (answer ?? {}) as Record<string, unknown>;
  return (
    typeof answer === 'object' && isResult(result) && textOrAbsent(fingerprint) && textOrAbsent(messageId)
  );
}

/** The time field each state of `inspect` may carry. */
export const INSPECT_TIME: Record<string, string | undefined> = {
  UNKNOWN: undefined,
  COMPLETED: 'expiresInMs',
  IN_PROGRESS: 'leaseLeftMs',
};

/** `{ state, ... }` with only the time field its state allows, in ms >= 0. */
function isInspection(answer: unknown): boolean {
  const { state, ...times } = (answer ?? {}) as Record<string, unknown>;
  return (
    typeof state === 'string' &&
    state in INSPECT_TIME &&
    Object.entries(times).every(
      ([field, ms]) =>
        ms === undefined || (field === INSPECT_TIME[state] && typeof ms === 'number' && ms >= 0),
    )
  );
}

const BATCHES = ['batches', 'it has no batch methods (the module then claims and completes key by key)'];

/**
 * What each method of the protocol must resolve to; for an optional one, the option that says a store
 * has none, and what the module then does without it.
 */
const PROTOCOL: Record<string, [string, (answer: unknown, args: unknown[]) => boolean, string[]?]> = {
  tryAcquire: [
    'an AcquireResult, or with a claim { result, fingerprint?, messageId? } (an AcquireResult and strings)',
    (answer, args) => isResult(answer) || (args[3] !== undefined && isHeldClaim(answer)),
  ],
  markComplete: ['true, false or undefined', isOwnership],
  forget: ['true, false or undefined', isOwnership],
  extend: ['a boolean', (answer) => typeof answer === 'boolean', ['extend', 'it has no lease heartbeat']],
  inspect: [
    "{ state: 'UNKNOWN' }, { state: 'COMPLETED', expiresInMs? } or { state: 'IN_PROGRESS', leaseLeftMs? } " +
      '(times in ms >= 0)',
    isInspection,
    ['inspect', 'it has no read-only key lookup'],
  ],
  tryAcquireMany: ['an array of AcquireResult values, one per entry', eachOf(isResult), BATCHES],
  markCompleteMany: [
    'an array of booleans, one per entry',
    eachOf((answer) => typeof answer === 'boolean'),
    BATCHES,
  ],
};

/**
 * `store`, each call of the protocol checked to return a promise of an answer the protocol allows (the
 * module turns any other answer into a store error for the record, so a store that answers off-protocol
 * fails every record it touches), and each optional method it lacks failing with the option to pass.
 */
function checked(store: IdempotencyStore): IdempotencyStore {
  return new Proxy(store, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name, target);
      if (typeof name !== 'string' || !Object.hasOwn(PROTOCOL, name)) return value;
      const [expected, allowed, without] = PROTOCOL[name];
      if (typeof value !== 'function') {
        if (without === undefined) return value;
        const fix = `pass { ${without[0]}: false } to describeIdempotencyStore if ${without[1]}`;
        return () => assert.fail(`the store has no ${name}(); ${fix}`);
      }
      return async (...args: unknown[]) => {
        const answer: unknown = value.apply(target, args);
        const then = (answer as { then?: unknown } | null)?.then;
        assert.ok(typeof then === 'function', `${name} must return a promise, got ${show(answer)}`);
        const settled = await answer;
        assert.ok(allowed(settled, args), `${name} must resolve to ${expected}, got ${show(settled)}`);
        return settled;
      };
    },
  });
}
