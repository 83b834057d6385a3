import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { AcquireResult, BatchClaim } from '../stores/idempotency-store.interface';
import { expectKept, expectLost, KitCaseContext, LONG_TTL, onlyWinner } from './kit-case-context';

const { ACQUIRED, IN_PROGRESS, COMPLETED } = AcquireResult;

/**
 * The conformance kit's cases for the batch methods (`tryAcquireMany`, `markCompleteMany`): a batch
 * of keys claimed or completed at once must answer, key by key and in order, exactly what the
 * single-key methods would have answered one after the other, with the same atomicity and fencing,
 * and mix freely with them (a key claimed in a batch is completed, released or extended by the
 * single-key methods, and the other way round).
 */
export function describeBatchCases(kit: KitCaseContext): void {
  const { describe, it, freshKeys, expectAnswer, claim, complete, expectCompletion } = kit;
  const claimMany = (claims: BatchClaim[], store = kit.store()) => store.tryAcquireMany!(claims);
  const expectCompletions = async (completions: BatchClaim[], expected: boolean[], why: string) =>
    assert.deepEqual(await kit.store().markCompleteMany!(completions), expected, why);
  /** One entry for each key, with its token. */
  const entries = (keys: string[], ttlMs: number, tokens: string[] = keys.map(() => randomUUID())) =>
    keys.map((key, i) => ({ key, ttlMs, token: tokens[i] }));

  describe('batches (tryAcquireMany, markCompleteMany)', () => {
    it('answers each claim of a batch in order, as tryAcquire would, the winners owning their keys', async () => {
      const keys = freshKeys(4);
      const [fresh, busy, done, other] = keys;
      const holder = await claim(busy);
      await complete(done);
      const batch = entries(keys, LONG_TTL);
      assert.deepEqual(
        await claimMany(batch),
        [ACQUIRED, IN_PROGRESS, COMPLETED, ACQUIRED],
        'a batch of a fresh, a claimed, a completed and a fresh key',
      );
      // The batch's tokens own what it won; the claim it met is still its holder's.
      expectLost(await kit.store().forget(fresh, randomUUID()), 'forget of a batch claim by another attempt');
      await expectCompletion(fresh, batch[0].token, 'markComplete by the batch');
      await expectCompletion(other, batch[3].token, 'markComplete by the batch');
      expectLost(await kit.markComplete(busy, batch[1].token), 'markComplete by a batch that lost');
      await expectCompletion(busy, holder, 'markComplete by the holder');
      assert.deepEqual(await claimMany([]), [], 'an empty batch');
      await expectCompletions([], [], 'an empty batch');
    });

    it('claims a key given twice in one batch once: the first entry wins', async (key) => {
      const batch = entries([key, key], LONG_TTL);
      assert.deepEqual(await claimMany(batch), [ACQUIRED, IN_PROGRESS]);
      expectLost(await kit.markComplete(key, batch[1].token), 'markComplete by the second entry');
      await expectCompletion(key, batch[0].token, 'markComplete by the first entry');
    });

    it(`gives each key to exactly one of ${Math.min(kit.concurrency, 20)} concurrent batches over the same keys`, async () => {
      const keys = freshKeys(10);
      const stores = kit.stores();
      // Each batch names the keys in another order, as overlapping SQS batches would.
      const batches = Array.from({ length: Math.min(kit.concurrency, 20) }, (_, b) =>
        entries([...keys.slice(b % keys.length), ...keys.slice(0, b % keys.length)], LONG_TTL),
      );
      const answers = await Promise.all(
        batches.map((batch, b) => claimMany(batch, stores[b % stores.length])),
      );
      for (const key of keys) {
        // Where each batch names the key (once), and what it answered there.
        const at = batches.map((batch) => batch.findIndex((entry) => entry.key === key));
        const keyAnswers = at.map((i, b) => answers[b][i]);
        const winner = onlyWinner(keyAnswers, 'batches');
        assert.ok(
          keyAnswers.every((answer) => answer !== COMPLETED),
          'no batch may see COMPLETED for a key nobody completed',
        );
        await expectCompletion(key, batches[winner][at[winner]].token, 'markComplete by the winning batch');
      }
    });

    it('keeps each claim’s own lease', async () => {
      const [brief, long] = freshKeys(2);
      await claimMany([...entries([brief], kit.shortTtl), ...entries([long], LONG_TTL)]);
      await kit.elapse(kit.pastShortTtl);
      await expectAnswer(brief, ACQUIRED, 'a batch claim past its short lease');
      await expectAnswer(long, IN_PROGRESS, 'a batch claim within its long lease');
    });

    it('completes each key of a batch as markComplete would, fenced: never another attempt’s claim', async () => {
      const keys = freshKeys(5);
      const [own, others, late, done, taken] = keys;
      const ownToken = await claim(own);
      const othersToken = await claim(others);
      const lateToken = await claim(late, kit.shortTtl);
      const doneToken = await complete(done);
      const staleToken = await claim(taken, kit.shortTtl);
      await kit.elapse(kit.pastShortTtl);
      const nextToken = await claim(taken);
      const tokens = [ownToken, randomUUID(), lateToken, doneToken, staleToken];
      await expectCompletions(
        entries(keys, LONG_TTL, tokens),
        [true, false, true, false, false],
        'own live claim, another attempt’s claim, own expired claim nobody took, a completed key, a stale owner’s key',
      );
      await expectAnswer(own, COMPLETED, 'a key the batch completed');
      await expectAnswer(late, COMPLETED, 'an expired claim the batch completed');
      await expectAnswer(done, COMPLETED, 'a completed key after the batch');
      await expectAnswer(others, IN_PROGRESS, 'another attempt’s claim after the batch');
      await expectAnswer(taken, IN_PROGRESS, 'the next owner’s claim after the stale batch');
      await expectCompletion(others, othersToken, 'its holder completes it');
      await expectCompletion(taken, nextToken, 'the next owner completes it');
    });

    it('completes each key with its own ttl (Infinity too), replacing the lease; a key given twice once', async () => {
      const keys = freshKeys(3);
      const claims = entries(keys, kit.shortTtl * 4);
      await claimMany(claims);
      const ttls = [kit.shortTtl, LONG_TTL, Infinity, LONG_TTL];
      const completions = [...claims, claims[1]].map((entry, i) => ({ ...entry, ttlMs: ttls[i] }));
      await expectCompletions(
        completions,
        [true, true, true, false],
        'three claims completed, then the second again',
      );
      await kit.elapse(kit.shortTtl * 4 + kit.pastShortTtl);
      await expectAnswer(keys[0], ACQUIRED, 'a key completed with a short ttl, past it');
      await expectAnswer(keys[1], COMPLETED, 'a key completed with a long ttl, past its former lease');
      await expectAnswer(keys[2], COMPLETED, 'a key completed with ttl Infinity');
    });

    it('mixes with the single-key methods', async (single) => {
      const batch = entries(freshKeys(1), kit.shortTtl * 4);
      const [{ key, token }] = batch;
      const singleToken = await claim(single);
      await claimMany(batch);
      if (kit.has.extend) {
        assert.equal(await kit.extend(key, token), true, 'extend of a batch claim by its owner');
        await kit.elapse(kit.shortTtl * 4 + kit.pastShortTtl);
        await expectAnswer(key, IN_PROGRESS, 'an extended batch claim past its first lease');
      }
      expectKept(await kit.store().forget(key, token), 'forget of a batch claim by its owner');
      await expectAnswer(key, ACQUIRED, 'a released batch claim');
      await expectCompletions(
        entries([single], LONG_TTL, [singleToken]),
        [true],
        'a batch completing a tryAcquire claim',
      );
      await expectAnswer(single, COMPLETED, 'a tryAcquire claim completed by a batch');
    });

    if (kit.has.fingerprints) {
      it('keeps a fingerprinted claim’s fingerprint through a batch completion', async (key) => {
        const claimed = {
          fingerprint: 'YmF0Y2hmaW5nZXJwcmk',
          messageId: 'a1b2c3d4-0000-4000-8000-000000000001',
        };
        const token = await claim(key, LONG_TTL, claimed);
        await expectCompletions(entries([key], LONG_TTL), [false], 'a batch completion by another attempt');
        await expectCompletions(entries([key], LONG_TTL, [token]), [true], 'its owner’s batch completion');
        await kit.expectHeld(
          key,
          COMPLETED,
          claimed,
          'a fingerprinted claim completed by a batch must keep its fingerprint and message id',
        );
      });
    }
  });
}
