import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import {
  AcquireResult,
  IdempotencyKeyInspection,
  IdempotencyStore,
} from '../stores/idempotency-store.interface';
import { describeBatchCases } from './describe-batch-cases';
import { KitCaseContext } from './kit-case-context';
import { describeFingerprintCases } from './describe-fingerprint-cases';

/**
 * The store conformance kit: the behaviour every `IdempotencyStore` must have for the idempotency
 * contract to hold, as one suite any store can run (the in-memory, Redis and DynamoDB stores run it
 * too), and its optional parts (`extend`, the read-only `inspect`, payload fingerprints, the batch
 * methods).
 *
 * It is runner-neutral on purpose: it asserts with `node:assert` and registers cases through
 * `describe`/`it`/`beforeEach`/`afterEach` taken from the runner's globals (Jest, Vitest with
 * `globals: true`, Mocha) or passed in (`runner`), so it works unchanged on Jest, Vitest and
 * `node:test`. It needs nothing but the store.
 */

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
  /**
   * Moves the store's clock forward (a fake clock). Without it, the expiry cases use short real
   * TTLs (`shortTtlMs`) and wait for them.
   */
  advanceTime?(ms: number): void | Promise<void>;
  /**
   * More stores over the same backing data (other connections, other processes' view), so that the
   * concurrent claimers are spread over several clients as they are in production.
   */
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
  /**
   * The store has `inspect` (the Idempotency Center's read-only key lookup): check that it answers
   * each state with the time left, and never writes. Default `true`; `false` for a store without it
   * (the Center then says the lookup is not supported).
   */
  inspect?: boolean;
  /**
   * The store keeps payload fingerprints (`tryAcquireWithFingerprint`): check it. Default `true`;
   * `false` for a store without them (the module then refuses `fingerprint` options with it).
   */
  fingerprints?: boolean;
  /**
   * The store claims and completes a batch's keys at once (`tryAcquireMany`, `markCompleteMany`):
   * check that each key of a batch is answered as the single-key methods would, with the same
   * atomicity and fencing. Default `true`; `false` for a store without them (the module then claims
   * and completes key by key).
   */
  batches?: boolean;
  /** Number of concurrent claimers of one key. Default 100. */
  concurrency?: number;
  /**
   * The short TTL (ms) of the expiry cases. They wait about twice as long in real time unless the
   * fixture has `advanceTime`. Raise it for stores whose expiry is coarse. Default 50. In real
   * time, a case that fails after a pause as long as this TTL (a loaded machine) runs again with
   * a 4x longer one, at most twice, so a busy CI runner does not fail a correct store.
   */
  shortTtlMs?: number;
  /** Prefix of every key the kit uses (each run adds a random part). Default `'conformance:'`. */
  keyPrefix?: string;
}

/** A TTL no case outlives. */
const LONG_TTL = 60_000;

/**
 * Registers the store conformance suite under `describe(name)`.
 *
 * @example Jest, or Vitest with its globals on
 * ```ts
 * import { describeIdempotencyStore } from 'nestjs-idempotent-sqs/testing';
 *
 * describeIdempotencyStore('PgIdempotencyStore', async () => {
 *   const pool = new Pool({ connectionString: process.env.DATABASE_URL });
 *   return { store: new PgIdempotencyStore(pool), dispose: () => pool.end() };
 * });
 * ```
 * @example Vitest without globals
 * ```ts
 * import { afterEach, beforeEach, describe, it } from 'vitest';
 * describeIdempotencyStore('PgIdempotencyStore', factory, { runner: { describe, it, beforeEach, afterEach } });
 * ```
 */
export function describeIdempotencyStore(
  name: string,
  factory: IdempotencyStoreFactory,
  options: DescribeIdempotencyStoreOptions = {},
): void {
  const runner = options.runner ?? runnerFromGlobals();
  const { describe, beforeEach, afterEach } = runner;
  const concurrency = options.concurrency ?? 100;
  const baseShortTtl = options.shortTtlMs ?? 50;
  let shortTtl = baseShortTtl;
  // Long enough past a short TTL that any store has let it go, however it rounds.
  let pastShortTtl = shortTtl * 2 + 20;
  // In real time, a case asserts that a short TTL has not run out yet only between two `elapse`
  // calls. The longest such stretch tells whether a failure may be the machine's pause rather
  // than the store's answer.
  let stretchStart = 0;
  let longestStretch = 0;
  const endStretch = () => {
    longestStretch = Math.max(longestStretch, Date.now() - stretchStart);
  };
  const runId = `${options.keyPrefix ?? 'conformance:'}${randomUUID()}:`;
  let keyCount = 0;
  let fixture: IdempotencyStoreFixture;

  const freshKey = (label: string) => `${runId}${label}:${++keyCount}`;
  const store = () => fixture.store;
  const elapse = async (ms: number) => {
    if (fixture.advanceTime) return fixture.advanceTime(ms);
    endStretch();
    await new Promise((resolve) => setTimeout(resolve, ms));
    stretchStart = Date.now();
  };
  /**
   * Registers a case. On a fake clock it runs once. In real time, a failure after a stretch at
   * least as long as the short TTL proves nothing (a loaded machine paused the case long enough for
   * its lease to run out): the case runs again with a 4x longer short TTL, at most twice. A store
   * that is wrong fails at every TTL.
   */
  const it = (name: string, body: () => Promise<void>) =>
    runner.it(name, async () => {
      for (let attempt = 0; ; attempt++) {
        shortTtl = baseShortTtl * 4 ** attempt;
        pastShortTtl = shortTtl * 2 + 20;
        stretchStart = Date.now();
        longestStretch = 0;
        try {
          return await body();
        } catch (error) {
          endStretch();
          if (fixture.advanceTime || longestStretch < shortTtl || attempt === 2) throw error;
        }
      }
    });
  const expectAnswer = async (key: string, expected: AcquireResult, why: string) => {
    const answer = await store().tryAcquire(key, LONG_TTL, randomUUID());
    assert.equal(answer, expected, `${why}: tryAcquire answered ${answer}, expected ${expected}`);
  };
  const expectKept = (result: boolean | void, what: string) =>
    assert.notEqual(result, false, `${what} answered false (claim lost) for the attempt that owns the key`);
  const expectLost = (result: boolean | void, what: string) =>
    assert.equal(result, false, `${what} must answer false for an attempt that does not own the key`);

  describe(name, () => {
    beforeEach(async () => {
      fixture = toFixture(await factory());
    });
    afterEach(async () => {
      await fixture?.dispose?.();
    });

    describe('the shape of its answers', () => {
      // The module turns any other answer into a store error for the record (it never trusts one),
      // so a store that answers off-protocol fails every record it touches.
      it('returns from every method a promise of a value the protocol allows', async () => {
        const key = freshKey('shape');
        const owner = randomUUID();
        const claimed = await promiseFrom(store().tryAcquire(key, LONG_TTL, owner), 'tryAcquire');
        assert.equal(
          claimed,
          AcquireResult.ACQUIRED,
          `tryAcquire of a fresh key resolved to ${show(claimed)}`,
        );
        const busy = await promiseFrom(store().tryAcquire(key, LONG_TTL, randomUUID()), 'tryAcquire');
        assert.equal(
          busy,
          AcquireResult.IN_PROGRESS,
          `tryAcquire of a claimed key resolved to ${show(busy)}`,
        );
        if (options.extend !== false) {
          const extended = await promiseFrom(extendOf(store())(key, LONG_TTL, owner), 'extend');
          assert.equal(
            typeof extended,
            'boolean',
            `extend must resolve to true or false, got ${show(extended)}`,
          );
        }
        expectOwnership(
          await promiseFrom(store().markComplete(key, LONG_TTL, owner), 'markComplete'),
          'markComplete',
        );
        const done = await promiseFrom(store().tryAcquire(key, LONG_TTL, randomUUID()), 'tryAcquire');
        assert.equal(
          done,
          AcquireResult.COMPLETED,
          `tryAcquire of a completed key resolved to ${show(done)}`,
        );
        expectOwnership(await promiseFrom(store().forget(key, owner), 'forget'), 'forget of a completed key');
        const other = freshKey('shape');
        await store().tryAcquire(other, LONG_TTL, owner);
        expectOwnership(await promiseFrom(store().forget(other, owner), 'forget'), 'forget');
        expectOwnership(
          await promiseFrom(store().forget(freshKey('shape'), owner), 'forget'),
          'forget of an absent key',
        );
      });

      it('describes itself with values of the right type (shared, maxTtlMs, warnings)', async () => {
        const { shared, maxTtlMs, warnings } = store();
        assert.ok(
          shared === undefined || typeof shared === 'boolean',
          `shared must be true, false or absent, got ${show(shared)}`,
        );
        assert.ok(
          maxTtlMs === undefined || (typeof maxTtlMs === 'number' && maxTtlMs > 0),
          `maxTtlMs must be a positive number of milliseconds or absent, got ${show(maxTtlMs)}`,
        );
        assert.ok(
          warnings === undefined ||
            (Array.isArray(warnings) &&
              warnings.every(
                (warning) => typeof warning?.code === 'string' && typeof warning?.message === 'string',
              )),
          `warnings must be absent or a list of { code, setting, message }, got ${show(warnings)}`,
        );
        if (maxTtlMs !== undefined) {
          // Its own limit must work: a claim and a completion that long are kept.
          const key = freshKey('max-ttl');
          const owner = randomUUID();
          assert.equal(
            await store().tryAcquire(key, Math.min(maxTtlMs, 2_147_483_647), owner),
            AcquireResult.ACQUIRED,
          );
          expectKept(
            await store().markComplete(key, maxTtlMs, owner),
            `markComplete with ttl = maxTtlMs (${maxTtlMs})`,
          );
          await expectAnswer(key, AcquireResult.COMPLETED, 'a key completed with ttl = maxTtlMs');
        }
      });
    });

    describe('the three answers', () => {
      it('answers ACQUIRED first, IN_PROGRESS while claimed, COMPLETED once completed', async () => {
        const key = freshKey('answers');
        const owner = randomUUID();
        assert.equal(await store().tryAcquire(key, LONG_TTL, owner), AcquireResult.ACQUIRED);
        await expectAnswer(key, AcquireResult.IN_PROGRESS, 'a claimed key');
        expectKept(await store().markComplete(key, LONG_TTL, owner), 'markComplete');
        await expectAnswer(key, AcquireResult.COMPLETED, 'a completed key');
        await expectAnswer(key, AcquireResult.COMPLETED, 'a completed key, asked again');
      });

      it('keeps keys apart', async () => {
        const first = freshKey('apart');
        const second = freshKey('apart');
        assert.equal(await store().tryAcquire(first, LONG_TTL, randomUUID()), AcquireResult.ACQUIRED);
        assert.equal(await store().tryAcquire(second, LONG_TTL, randomUUID()), AcquireResult.ACQUIRED);
      });
    });

    describe('atomicity', () => {
      it(`gives ACQUIRED to exactly one of ${concurrency} concurrent claimers of one key`, async () => {
        const key = freshKey('race');
        const stores = [fixture.store, ...(fixture.peers ?? [])];
        const tokens = Array.from({ length: concurrency }, () => randomUUID());
        const answers = await Promise.all(
          tokens.map((token, index) => stores[index % stores.length].tryAcquire(key, LONG_TTL, token)),
        );
        const winners = answers.flatMap((answer, index) =>
          answer === AcquireResult.ACQUIRED ? [index] : [],
        );
        assert.equal(winners.length, 1, `${winners.length} claimers got ACQUIRED`);
        assert.equal(
          answers.filter((answer) => answer === AcquireResult.IN_PROGRESS).length,
          concurrency - 1,
          'every other claimer must get IN_PROGRESS',
        );
        // The winner's token is the one that owns the key.
        for (const [index, token] of tokens.entries()) {
          if (index !== winners[0]) expectLost(await store().forget(key, token), 'forget by a loser');
        }
        expectKept(
          await store().markComplete(key, LONG_TTL, tokens[winners[0]]),
          'markComplete by the winner',
        );
      });

      it(`answers COMPLETED to ${concurrency} concurrent claimers of a completed key`, async () => {
        const key = freshKey('completed-race');
        const owner = randomUUID();
        await store().tryAcquire(key, LONG_TTL, owner);
        await store().markComplete(key, LONG_TTL, owner);
        const answers = await Promise.all(
          Array.from({ length: concurrency }, () => store().tryAcquire(key, LONG_TTL, randomUUID())),
        );
        assert.deepEqual(new Set(answers), new Set([AcquireResult.COMPLETED]));
      });

      it(`gives ACQUIRED to ${concurrency} concurrent claimers of distinct keys`, async () => {
        const answers = await Promise.all(
          Array.from({ length: concurrency }, () =>
            store().tryAcquire(freshKey('distinct'), LONG_TTL, randomUUID()),
          ),
        );
        assert.deepEqual(new Set(answers), new Set([AcquireResult.ACQUIRED]));
      });
    });

    describe('expiry', () => {
      it('frees a key whose lease expired (a crashed worker) for the next claimer', async () => {
        const key = freshKey('lease');
        await store().tryAcquire(key, shortTtl, randomUUID());
        await elapse(pastShortTtl);
        await expectAnswer(key, AcquireResult.ACQUIRED, 'a key whose lease expired');
      });

      it('remembers a completed key for ttl, then forgets it', async () => {
        const key = freshKey('ttl');
        const owner = randomUUID();
        await store().tryAcquire(key, LONG_TTL, owner);
        expectKept(await store().markComplete(key, shortTtl, owner), 'markComplete');
        await expectAnswer(key, AcquireResult.COMPLETED, 'a completed key within its ttl');
        await elapse(pastShortTtl);
        await expectAnswer(key, AcquireResult.ACQUIRED, 'a completed key past its ttl');
      });

      it('replaces the lease with the ttl on completion', async () => {
        const key = freshKey('lease-to-ttl');
        const owner = randomUUID();
        await store().tryAcquire(key, shortTtl * 4, owner);
        expectKept(await store().markComplete(key, LONG_TTL, owner), 'markComplete');
        await elapse(shortTtl * 4 + pastShortTtl);
        await expectAnswer(key, AcquireResult.COMPLETED, 'a completed key past its former lease');
      });

      it('remembers a key completed with ttl Infinity', async () => {
        const key = freshKey('forever');
        const owner = randomUUID();
        await store().tryAcquire(key, shortTtl, owner);
        expectKept(await store().markComplete(key, Infinity, owner), 'markComplete with Infinity');
        // With a fake clock, ten years; in real time, past the lease it replaced.
        await elapse(fixture.advanceTime ? 10 * 365 * 86_400_000 : pastShortTtl);
        await expectAnswer(key, AcquireResult.COMPLETED, 'a key completed with ttl Infinity');
      });

      it('accepts fractional TTLs', async () => {
        const key = freshKey('fraction');
        const owner = randomUUID();
        assert.equal(await store().tryAcquire(key, LONG_TTL + 0.5, owner), AcquireResult.ACQUIRED);
        expectKept(await store().markComplete(key, LONG_TTL + 0.25, owner), 'markComplete');
        await expectAnswer(key, AcquireResult.COMPLETED, 'a key completed with a fractional ttl');
      });

      it('a sub-millisecond TTL still expires (rounded up, never to "no expiry")', async () => {
        // A store that rounds 0.4 ms down to 0 may write "no expiry" (Redis PX 0, a NULL column):
        // the lease of a crashed worker, or a completed key, would then hold forever.
        const lease = freshKey('sub-ms-lease');
        assert.equal(await store().tryAcquire(lease, 0.4, randomUUID()), AcquireResult.ACQUIRED);
        const completed = freshKey('sub-ms-ttl');
        const owner = randomUUID();
        await store().tryAcquire(completed, LONG_TTL, owner);
        expectKept(await store().markComplete(completed, 0.4, owner), 'markComplete');
        await elapse(pastShortTtl);
        await expectAnswer(lease, AcquireResult.ACQUIRED, 'a key whose sub-millisecond lease passed');
        await expectAnswer(
          completed,
          AcquireResult.ACQUIRED,
          'a key completed with a sub-millisecond ttl, past it',
        );
      });
    });

    describe('fencing', () => {
      it('keeps a stale owner from completing, releasing or extending the next owner’s claim', async () => {
        const key = freshKey('stale');
        const stale = randomUUID();
        const next = randomUUID();
        await store().tryAcquire(key, shortTtl, stale);
        await elapse(pastShortTtl);
        assert.equal(await store().tryAcquire(key, LONG_TTL, next), AcquireResult.ACQUIRED);
        expectLost(await store().markComplete(key, LONG_TTL, stale), 'markComplete by the stale owner');
        expectLost(await store().forget(key, stale), 'forget by the stale owner');
        if (options.extend !== false) {
          expectLost(await extendOf(store())(key, LONG_TTL, stale), 'extend by the stale owner');
        }
        await expectAnswer(key, AcquireResult.IN_PROGRESS, 'the next owner’s claim after the stale writes');
        expectKept(await store().markComplete(key, LONG_TTL, next), 'markComplete by the next owner');
        await expectAnswer(key, AcquireResult.COMPLETED, 'the key the next owner completed');
      });

      it('keeps another attempt from completing or releasing a live claim', async () => {
        const key = freshKey('other');
        const owner = randomUUID();
        const other = randomUUID();
        await store().tryAcquire(key, LONG_TTL, owner);
        expectLost(await store().markComplete(key, LONG_TTL, other), 'markComplete by another attempt');
        expectLost(await store().forget(key, other), 'forget by another attempt');
        await expectAnswer(key, AcquireResult.IN_PROGRESS, 'the owner’s claim');
        expectKept(await store().forget(key, owner), 'forget by the owner');
        await expectAnswer(key, AcquireResult.ACQUIRED, 'the key the owner released');
      });

      it('completes an expired claim nobody took over', async () => {
        const key = freshKey('late');
        const owner = randomUUID();
        await store().tryAcquire(key, shortTtl, owner);
        await elapse(pastShortTtl);
        expectKept(await store().markComplete(key, LONG_TTL, owner), 'markComplete after the lease expired');
        await expectAnswer(key, AcquireResult.COMPLETED, 'the key completed late');
      });

      it('never releases a completed key, not even for the attempt that completed it', async () => {
        const key = freshKey('completed');
        const owner = randomUUID();
        await store().tryAcquire(key, LONG_TTL, owner);
        await store().markComplete(key, LONG_TTL, owner);
        expectLost(await store().forget(key, randomUUID()), 'forget of a completed key by another attempt');
        expectLost(await store().forget(key, owner), 'forget of a completed key by its owner');
        await expectAnswer(key, AcquireResult.COMPLETED, 'a completed key after forget');
      });
    });

    describe('forget', () => {
      it('releases the owner’s claim so a redelivery runs again', async () => {
        const key = freshKey('forget');
        const owner = randomUUID();
        await store().tryAcquire(key, LONG_TTL, owner);
        expectKept(await store().forget(key, owner), 'forget by the owner');
        await expectAnswer(key, AcquireResult.ACQUIRED, 'a released key');
      });

      it('succeeds when there is nothing to release', async () => {
        const key = freshKey('forget-absent');
        expectKept(await store().forget(key, randomUUID()), 'forget of an absent key');
        const owner = randomUUID();
        await store().tryAcquire(key, shortTtl, owner);
        await elapse(pastShortTtl);
        expectKept(await store().forget(key, owner), 'forget after the lease expired');
        await expectAnswer(key, AcquireResult.ACQUIRED, 'the key after a late forget');
      });
    });

    if (options.inspect !== false) {
      describe('inspect (read-only, for the key lookup)', () => {
        const inspect = (key: string) => inspectOf(store())(key);

        it('answers UNKNOWN for a key never claimed, and claims nothing', async () => {
          const key = freshKey('inspect-absent');
          assert.deepEqual(await inspect(key), { state: 'UNKNOWN' }, 'inspect of a key never claimed');
          await expectAnswer(key, AcquireResult.ACQUIRED, 'a key after inspect');
        });

        it('answers IN_PROGRESS with the lease left, and never extends the lease', async () => {
          const key = freshKey('inspect-claimed');
          const lease = shortTtl * 4;
          await store().tryAcquire(key, lease, randomUUID());
          const seen = await inspect(key);
          assert.equal(seen.state, 'IN_PROGRESS', `inspect of a claimed key answered ${show(seen)}`);
          const left = (seen as { leaseLeftMs?: number }).leaseLeftMs;
          assert.ok(
            left !== undefined && left > 0 && left <= lease + 1,
            `leaseLeftMs must be the lease left (0 < ms <= ${lease}), got ${show(left)}`,
          );
          await elapse(lease + pastShortTtl);
          assert.deepEqual(await inspect(key), { state: 'UNKNOWN' }, 'inspect of a claim past its lease');
          await expectAnswer(key, AcquireResult.ACQUIRED, 'a key inspected while claimed, past its lease');
        });

        it('answers COMPLETED with the time left in the dedup window, none for ttl Infinity', async () => {
          const key = freshKey('inspect-completed');
          const owner = randomUUID();
          await store().tryAcquire(key, LONG_TTL, owner);
          await store().markComplete(key, LONG_TTL, owner);
          const seen = await inspect(key);
          assert.equal(seen.state, 'COMPLETED', `inspect of a completed key answered ${show(seen)}`);
          const left = (seen as { expiresInMs?: number }).expiresInMs;
          assert.ok(
            left !== undefined && left > LONG_TTL / 2 && left <= LONG_TTL + 1,
            `expiresInMs must be the dedup window left (about ${LONG_TTL}), got ${show(left)}`,
          );
          await expectAnswer(key, AcquireResult.COMPLETED, 'a completed key after inspect');

          const forever = freshKey('inspect-forever');
          await store().tryAcquire(forever, LONG_TTL, owner);
          await store().markComplete(forever, Infinity, owner);
          assert.deepEqual(
            await inspect(forever),
            { state: 'COMPLETED' },
            'a key completed with ttl Infinity: COMPLETED without expiresInMs',
          );
        });

        it('answers UNKNOWN for a released key and for one past its dedup window', async () => {
          const released = freshKey('inspect-released');
          const owner = randomUUID();
          await store().tryAcquire(released, LONG_TTL, owner);
          await store().forget(released, owner);
          assert.deepEqual(await inspect(released), { state: 'UNKNOWN' }, 'inspect of a released key');

          const expired = freshKey('inspect-expired');
          await store().tryAcquire(expired, LONG_TTL, owner);
          await store().markComplete(expired, shortTtl, owner);
          await elapse(pastShortTtl);
          assert.deepEqual(await inspect(expired), { state: 'UNKNOWN' }, 'inspect past the dedup window');
        });
      });
    }

    if (options.extend !== false) {
      describe('extend', () => {
        it('pushes the owner’s lease forward', async () => {
          const key = freshKey('extend');
          const owner = randomUUID();
          await store().tryAcquire(key, shortTtl * 4, owner);
          assert.equal(await extendOf(store())(key, LONG_TTL, owner), true, 'extend by the owner');
          await elapse(shortTtl * 4 + pastShortTtl);
          await expectAnswer(key, AcquireResult.IN_PROGRESS, 'an extended claim past its first lease');
        });

        it('answers false to another attempt and leaves the lease alone', async () => {
          const key = freshKey('extend-other');
          await store().tryAcquire(key, shortTtl, randomUUID());
          expectLost(await extendOf(store())(key, LONG_TTL, randomUUID()), 'extend by another attempt');
          await elapse(pastShortTtl);
          await expectAnswer(key, AcquireResult.ACQUIRED, 'a claim another attempt tried to extend');
        });

        it('does not resurrect an expired lease', async () => {
          const key = freshKey('extend-expired');
          const owner = randomUUID();
          await store().tryAcquire(key, shortTtl, owner);
          await elapse(pastShortTtl);
          expectLost(await extendOf(store())(key, LONG_TTL, owner), 'extend of an expired lease');
          await expectAnswer(key, AcquireResult.ACQUIRED, 'a key whose lease expired before extend');
        });

        it('does not extend a completed key', async () => {
          const key = freshKey('extend-completed');
          const owner = randomUUID();
          await store().tryAcquire(key, LONG_TTL, owner);
          await store().markComplete(key, LONG_TTL, owner);
          expectLost(await extendOf(store())(key, LONG_TTL, owner), 'extend of a completed key');
          await expectAnswer(key, AcquireResult.COMPLETED, 'a completed key after extend');
        });
      });
    }

    // What the optional groups of cases share with the cases above.
    const caseContext: KitCaseContext = {
      describe,
      it,
      store,
      stores: () => [fixture.store, ...(fixture.peers ?? [])],
      freshKey,
      elapse,
      get shortTtl() {
        return shortTtl;
      },
      get pastShortTtl() {
        return pastShortTtl;
      },
      longTtl: LONG_TTL,
      concurrency,
    };
    if (options.fingerprints !== false) describeFingerprintCases(caseContext);
    if (options.batches !== false) {
      describeBatchCases({
        ...caseContext,
        extend: options.extend !== false,
        fingerprints: options.fingerprints !== false,
      });
    }
  });
}

/** `value` when it is a promise (a thenable); an assertion failure naming `method` otherwise. */
function promiseFrom<T>(value: Promise<T>, method: string): Promise<T> {
  const thenable = value as unknown as { then?: unknown } | null;
  assert.ok(
    thenable !== null && typeof thenable === 'object' && typeof thenable.then === 'function',
    `${method} must return a promise, got ${show(value)}`,
  );
  return value;
}

function expectOwnership(answer: unknown, what: string): void {
  assert.ok(
    answer === true || answer === false || answer === undefined,
    `${what} must resolve to true, false or undefined, got ${show(answer)}`,
  );
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') return String(value);
  try {
    return JSON.stringify(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

function toFixture(made: IdempotencyStore | IdempotencyStoreFixture): IdempotencyStoreFixture {
  const isBareStore = typeof (made as IdempotencyStore).tryAcquire === 'function';
  const fixture = isBareStore ? { store: made as IdempotencyStore } : (made as IdempotencyStoreFixture);
  assert.ok(
    fixture.store && typeof fixture.store.tryAcquire === 'function',
    'describeIdempotencyStore: the factory must return a store or { store, advanceTime?, peers?, dispose? }',
  );
  return fixture;
}

function extendOf(store: IdempotencyStore): NonNullable<IdempotencyStore['extend']> {
  assert.equal(
    typeof store.extend,
    'function',
    'the store has no extend(); pass { extend: false } to describeIdempotencyStore if it has no lease heartbeat',
  );
  return store.extend!.bind(store);
}

/** The store's `inspect`, checked to return a promise of `{ state, ... }` with only the fields its state allows. */
function inspectOf(store: IdempotencyStore): (key: string) => Promise<IdempotencyKeyInspection> {
  assert.equal(
    typeof store.inspect,
    'function',
    'the store has no inspect(); pass { inspect: false } to describeIdempotencyStore if it has no read-only key lookup',
  );
  return async (key) => {
    const answer = await promiseFrom(store.inspect!(key), 'inspect');
    const allowed: Record<string, string[]> = {
      UNKNOWN: ['state'],
      COMPLETED: ['state', 'expiresInMs'],
      IN_PROGRESS: ['state', 'leaseLeftMs'],
    };
    const fields = allowed[(answer as { state?: string } | null)?.state ?? ''];
    assert.ok(
      fields !== undefined &&
        Object.entries(answer).every(
          ([field, value]) =>
            fields.includes(field) &&
            (field === 'state' || value === undefined || (typeof value === 'number' && value >= 0)),
        ),
      `inspect must resolve to { state: 'UNKNOWN' }, { state: 'COMPLETED', expiresInMs? } or ` +
        `{ state: 'IN_PROGRESS', leaseLeftMs? } (times in ms >= 0), got ${show(answer)}`,
    );
    return answer.state === 'UNKNOWN'
      ? answer
      : (Object.fromEntries(
          Object.entries(answer).filter(([, value]) => value !== undefined),
        ) as IdempotencyKeyInspection);
  };
}

function runnerFromGlobals(): StoreConformanceRunner {
  const globals = globalThis as Partial<StoreConformanceRunner> & { test?: StoreConformanceRunner['it'] };
  const runner = {
    describe: globals.describe,
    it: globals.it ?? globals.test,
    beforeEach: globals.beforeEach,
    afterEach: globals.afterEach,
  };
  const missing = Object.entries(runner).flatMap(([name, fn]) => (typeof fn === 'function' ? [] : [name]));
  if (missing.length > 0) {
    throw new Error(
      `describeIdempotencyStore: no global ${missing.join(', ')}. Run it under Jest (or Vitest with globals: true), ` +
        "or pass the runner's functions: describeIdempotencyStore(name, factory, { runner: { describe, it, beforeEach, afterEach } }).",
    );
  }
  return runner as StoreConformanceRunner;
}
