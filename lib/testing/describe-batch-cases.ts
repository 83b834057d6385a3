import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import {
  AcquireResult,
  BatchClaim,
  BatchCompletion,
  IdempotencyStore,
} from '../stores/idempotency-store.interface';
import { KitCaseContext } from './kit-case-context';

/**
 * The conformance kit's cases for the optional batch methods (`tryAcquireMany`, `markCompleteMany`):
 * a batch of keys claimed or completed at once must answer, key by key and in order, exactly what
 * the single-key methods would have answered one after the other, with the same atomicity and the
 * same fencing, and mix freely with them (a key claimed in a batch is completed, released or
 * extended by the single-key methods, and the other way round). Registered by
 * `describeIdempotencyStore` unless `batches: false`.
 */

/** What the cases need from the kit, and which optional methods the store has besides the batch ones. */
export interface BatchCaseContext extends KitCaseContext {
  /** Whether the store has `extend` and `tryAcquireWithFingerprint` (their cases then mix them in). */
  extend: boolean;
  fingerprints: boolean;
}

const RESULTS = new Set<unknown>(Object.values(AcquireResult));

/** Registers the batch cases. */
export function describeBatchCases(kit: BatchCaseContext): void {
  const { describe, it, longTtl } = kit;
  const claimMany = async (claims: BatchClaim[], store = kit.store()) =>
    checkedAnswers(
      await promiseOf(batchMethod(store, 'tryAcquireMany')(claims)),
      claims.length,
      'tryAcquireMany',
    );
  const completeMany = async (completions: BatchCompletion[], store = kit.store()) =>
    checkedAnswers(
      await promiseOf(batchMethod(store, 'markCompleteMany')(completions)),
      completions.length,
      'markCompleteMany',
    );
  const expectAnswer = async (key: string, expected: AcquireResult, why: string) => {
    const answer = await kit.store().tryAcquire(key, longTtl, randomUUID());
    assert.equal(answer, expected, `${why}: tryAcquire answered ${answer}, expected ${expected}`);
  };
  const claimed = async (key: string, ttlMs = longTtl) => {
    const token = randomUUID();
    assert.equal(await kit.store().tryAcquire(key, ttlMs, token), AcquireResult.ACQUIRED);
    return token;
  };

  describe('batches (tryAcquireMany, markCompleteMany)', () => {
    it('answers each claim of a batch in order, as tryAcquire would, the winners owning their keys', async () => {
      const [fresh, busy, done, other] = ['fresh', 'busy', 'done', 'other'].map((label) =>
        kit.freshKey(`batch-claim-${label}`),
      );
      const holder = await claimed(busy);
      const completer = await claimed(done);
      await kit.store().markComplete(done, longTtl, completer);
      const tokens = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
      const answers = await claimMany(
        [fresh, busy, done, other].map((key, i) => ({ key, ttlMs: longTtl, token: tokens[i] })),
      );
      assert.deepEqual(
        answers,
        [AcquireResult.ACQUIRED, AcquireResult.IN_PROGRESS, AcquireResult.COMPLETED, AcquireResult.ACQUIRED],
        'a batch of a fresh, a claimed, a completed and a fresh key',
      );
      // The batch's tokens own what it won; the claim it met is still its holder's.
      assert.equal(
        await kit.store().forget(fresh, randomUUID()),
        false,
        'forget of a batch claim by another attempt',
      );
      assert.notEqual(
        await kit.store().markComplete(fresh, longTtl, tokens[0]),
        false,
        'markComplete by the batch',
      );
      assert.notEqual(
        await kit.store().markComplete(other, longTtl, tokens[3]),
        false,
        'markComplete by the batch',
      );
      assert.equal(
        await kit.store().markComplete(busy, longTtl, tokens[1]),
        false,
        'markComplete by a batch that lost',
      );
      assert.notEqual(
        await kit.store().markComplete(busy, longTtl, holder),
        false,
        'markComplete by the holder',
      );
      assert.deepEqual(await claimMany([]), [], 'an empty batch');
      assert.deepEqual(await completeMany([]), [], 'an empty batch');
    });

    it('claims a key given twice in one batch once: the first entry wins', async () => {
      const key = kit.freshKey('batch-twice');
      const [first, second] = [randomUUID(), randomUUID()];
      assert.deepEqual(
        await claimMany([
          { key, ttlMs: longTtl, token: first },
          { key, ttlMs: longTtl, token: second },
        ]),
        [AcquireResult.ACQUIRED, AcquireResult.IN_PROGRESS],
      );
      assert.equal(
        await kit.store().markComplete(key, longTtl, second),
        false,
        'markComplete by the second entry',
      );
      assert.notEqual(
        await kit.store().markComplete(key, longTtl, first),
        false,
        'markComplete by the first entry',
      );
    });

    it(`gives each key to exactly one of ${Math.min(kit.concurrency, 20)} concurrent batches over the same keys`, async () => {
      const keys = Array.from({ length: 10 }, () => kit.freshKey('batch-race'));
      const stores = kit.stores();
      const batches = Array.from({ length: Math.min(kit.concurrency, 20) }, (_, b) =>
        // Each batch names the keys in another order, as overlapping SQS batches would.
        keys.map((_, i) => ({ key: keys[(i + b) % keys.length], ttlMs: longTtl, token: randomUUID() })),
      );
      const answers = await Promise.all(
        batches.map((batch, b) => claimMany(batch, stores[b % stores.length])),
      );
      for (const key of keys) {
        const outcomes = batches.flatMap((batch, b) =>
          batch.flatMap((claim, i) =>
            claim.key === key ? [{ token: claim.token, answer: answers[b][i] }] : [],
          ),
        );
        const winners = outcomes.filter(({ answer }) => answer === AcquireResult.ACQUIRED);
        assert.equal(winners.length, 1, `${winners.length} batches got ACQUIRED for one key`);
        assert.ok(
          outcomes.every(({ answer }) => answer !== AcquireResult.COMPLETED),
          'no batch may see COMPLETED for a key nobody completed',
        );
        assert.notEqual(
          await kit.store().markComplete(key, longTtl, winners[0].token),
          false,
          'markComplete by the winning batch',
        );
      }
    });

    it('keeps each claim’s own lease', async () => {
      const [brief, long] = [kit.freshKey('batch-lease'), kit.freshKey('batch-lease')];
      await claimMany([
        { key: brief, ttlMs: kit.shortTtl, token: randomUUID() },
        { key: long, ttlMs: longTtl, token: randomUUID() },
      ]);
      await kit.elapse(kit.pastShortTtl);
      await expectAnswer(brief, AcquireResult.ACQUIRED, 'a batch claim past its short lease');
      await expectAnswer(long, AcquireResult.IN_PROGRESS, 'a batch claim within its long lease');
    });

    it('completes each key of a batch as markComplete would, fenced: never another attempt’s claim', async () => {
      const own = kit.freshKey('batch-own');
      const others = kit.freshKey('batch-others');
      const late = kit.freshKey('batch-late');
      const done = kit.freshKey('batch-done');
      const taken = kit.freshKey('batch-taken');
      const ownToken = await claimed(own);
      const othersToken = await claimed(others);
      const lateToken = await claimed(late, kit.shortTtl);
      const doneToken = await claimed(done);
      await kit.store().markComplete(done, longTtl, doneToken);
      const staleToken = await claimed(taken, kit.shortTtl);
      await kit.elapse(kit.pastShortTtl);
      const nextToken = await claimed(taken);
      const answers = await completeMany([
        { key: own, ttlMs: longTtl, token: ownToken },
        { key: others, ttlMs: longTtl, token: randomUUID() },
        { key: late, ttlMs: longTtl, token: lateToken },
        { key: done, ttlMs: longTtl, token: doneToken },
        { key: taken, ttlMs: longTtl, token: staleToken },
      ]);
      assert.deepEqual(
        answers,
        [true, false, true, false, false],
        'own live claim, another attempt’s claim, own expired claim nobody took, a completed key, a stale owner’s key',
      );
      await expectAnswer(own, AcquireResult.COMPLETED, 'a key the batch completed');
      await expectAnswer(late, AcquireResult.COMPLETED, 'an expired claim the batch completed');
      await expectAnswer(done, AcquireResult.COMPLETED, 'a completed key after the batch');
      await expectAnswer(others, AcquireResult.IN_PROGRESS, 'another attempt’s claim after the batch');
      await expectAnswer(taken, AcquireResult.IN_PROGRESS, 'the next owner’s claim after the stale batch');
      assert.notEqual(
        await kit.store().markComplete(others, longTtl, othersToken),
        false,
        'its holder completes it',
      );
      assert.notEqual(
        await kit.store().markComplete(taken, longTtl, nextToken),
        false,
        'the next owner completes it',
      );
    });

    it('completes each key with its own ttl (Infinity too), replacing the lease; a key given twice once', async () => {
      const [brief, long, forever] = ['brief', 'long', 'forever'].map((label) =>
        kit.freshKey(`batch-ttl-${label}`),
      );
      const tokens = [randomUUID(), randomUUID(), randomUUID()];
      await claimMany(
        [brief, long, forever].map((key, i) => ({ key, ttlMs: kit.shortTtl * 4, token: tokens[i] })),
      );
      assert.deepEqual(
        await completeMany([
          { key: brief, ttlMs: kit.shortTtl, token: tokens[0] },
          { key: long, ttlMs: longTtl, token: tokens[1] },
          { key: forever, ttlMs: Infinity, token: tokens[2] },
          { key: long, ttlMs: longTtl, token: tokens[1] },
        ]),
        [true, true, true, false],
        'three claims completed, then the second again',
      );
      await kit.elapse(kit.shortTtl * 4 + kit.pastShortTtl);
      await expectAnswer(brief, AcquireResult.ACQUIRED, 'a key completed with a short ttl, past it');
      await expectAnswer(
        long,
        AcquireResult.COMPLETED,
        'a key completed with a long ttl, past its former lease',
      );
      await expectAnswer(forever, AcquireResult.COMPLETED, 'a key completed with ttl Infinity');
    });

    it('mixes with the single-key methods', async () => {
      const single = kit.freshKey('batch-mix');
      const batch = kit.freshKey('batch-mix');
      const singleToken = await claimed(single);
      const batchToken = randomUUID();
      await claimMany([{ key: batch, ttlMs: kit.shortTtl * 4, token: batchToken }]);
      if (kit.extend) {
        assert.equal(
          await kit.store().extend!(batch, longTtl, batchToken),
          true,
          'extend of a batch claim by its owner',
        );
        await kit.elapse(kit.shortTtl * 4 + kit.pastShortTtl);
        await expectAnswer(batch, AcquireResult.IN_PROGRESS, 'an extended batch claim past its first lease');
      }
      assert.notEqual(
        await kit.store().forget(batch, batchToken),
        false,
        'forget of a batch claim by its owner',
      );
      await expectAnswer(batch, AcquireResult.ACQUIRED, 'a released batch claim');
      assert.deepEqual(
        await completeMany([{ key: single, ttlMs: longTtl, token: singleToken }]),
        [true],
        'a batch completing a tryAcquire claim',
      );
      await expectAnswer(single, AcquireResult.COMPLETED, 'a tryAcquire claim completed by a batch');
    });

    if (kit.fingerprints) {
      it('keeps a fingerprinted claim’s fingerprint through a batch completion', async () => {
        const key = kit.freshKey('batch-fingerprint');
        const token = randomUUID();
        const claim = {
          fingerprint: 'YmF0Y2hmaW5nZXJwcmk',
          messageId: 'a1b2c3d4-0000-4000-8000-000000000001',
        };
        await kit.store().tryAcquireWithFingerprint!(key, longTtl, token, claim);
        assert.deepEqual(
          await completeMany([{ key, ttlMs: longTtl, token: randomUUID() }]),
          [false],
          'a batch completion by another attempt',
        );
        assert.deepEqual(
          await completeMany([{ key, ttlMs: longTtl, token }]),
          [true],
          'its owner’s batch completion',
        );
        const answer = await kit.store().tryAcquireWithFingerprint!(key, longTtl, randomUUID(), {
          fingerprint: 'cHJvYmU',
        });
        assert.deepEqual(
          { result: answer.result, fingerprint: answer.fingerprint, messageId: answer.messageId },
          { result: AcquireResult.COMPLETED, ...claim },
          'a fingerprinted claim completed by a batch must keep its fingerprint and message id',
        );
      });
    }
  });
}

function batchMethod<M extends 'tryAcquireMany' | 'markCompleteMany'>(
  store: IdempotencyStore,
  method: M,
): NonNullable<IdempotencyStore[M]> {
  assert.equal(
    typeof store[method],
    'function',
    `the store has no ${method}(); pass { batches: false } to describeIdempotencyStore if it has no batch ` +
      'methods (the module then claims and completes key by key)',
  );
  return (store[method] as (...args: unknown[]) => unknown).bind(store) as NonNullable<IdempotencyStore[M]>;
}

function promiseOf<T>(value: Promise<T>): Promise<T> {
  const thenable = value as unknown as { then?: unknown } | null;
  assert.ok(
    thenable !== null && typeof thenable === 'object' && typeof thenable.then === 'function',
    `a batch method must return a promise, got ${String(value)}`,
  );
  return value;
}

/** The answers, checked: an array with one protocol value per entry. */
function checkedAnswers<T>(answers: T[], length: number, method: string): T[] {
  const allowed = (answer: unknown) =>
    method === 'tryAcquireMany' ? RESULTS.has(answer) : answer === true || answer === false;
  assert.ok(
    Array.isArray(answers) && answers.length === length && answers.every(allowed),
    `${method} must resolve to an array of ${length} ${method === 'tryAcquireMany' ? 'AcquireResult values' : 'booleans'}, ` +
      `one per entry, got ${JSON.stringify(answers)}`,
  );
  return answers;
}
