import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { AcquireResult } from '../stores/idempotency-store.interface';
import { expectKept, expectLost, KitCaseContext, LONG_TTL, onlyWinner } from './kit-case-context';

const { ACQUIRED, IN_PROGRESS, COMPLETED } = AcquireResult;
const first = { fingerprint: 'Zm9vYmFyYmF6cXV4', messageId: '0f8fad5b-d9cb-469f-a165-70867728950e' };
const second = { fingerprint: 'cXV1eGJhemJhcmZv', messageId: '7c9e6679-7425-40de-944b-e07fc1f90ae7' };

/**
 * The conformance kit's cases for payload fingerprints (`tryAcquire` with a claim). The module
 * compares fingerprints itself; what it needs from a store is that the fingerprint (and message id)
 * a claim kept come back with every later answer about that claim, completed or in flight, and never
 * outlive it: a key claimed again keeps the new claim's fingerprint, or none after a claim without one.
 */
export function describeFingerprintCases(kit: KitCaseContext): void {
  const { describe, it, freshKey, claim, expectAnswer, expectHeld, expectCompletion } = kit;

  describe('payload fingerprints (tryAcquire with a claim)', () => {
    it('answers with the fingerprint and message id the holding claim kept, in flight and once completed', async (key) => {
      const owner = await claim(key, LONG_TTL, first);
      // The module acks a copy with the same fingerprint as a duplicate, and fails another one.
      await expectHeld(key, IN_PROGRESS, first, 'a claim in flight');
      await expectHeld(key, IN_PROGRESS, first, 'a claim with another fingerprint', second);
      await expectCompletion(key, owner, 'markComplete by the owner');
      await expectHeld(key, COMPLETED, first, 'the completed key');
      await expectHeld(key, COMPLETED, first, 'the completed key, claimed with its own', first);
    });

    it('answers tryAcquire without a claim a bare result, and fences as for a claim without a fingerprint', async (key) => {
      const owner = await claim(key, LONG_TTL, first);
      await expectAnswer(key, IN_PROGRESS, 'a key claimed with a fingerprint');
      // Another attempt, even one whose token starts with the owner's, owns nothing.
      for (const other of [randomUUID(), owner.slice(0, 8)])
        await kit.expectRefused(key, other, `token ${other}`);
      if (kit.has.extend) assert.equal(await kit.extend(key, owner), true, 'extend by the owner');
      await expectCompletion(key, owner, 'markComplete by the owner');
      await expectAnswer(key, COMPLETED, 'plain tryAcquire of a key completed with a fingerprint');
      expectLost(await kit.store().forget(key, owner), 'forget of a completed key');
      await expectHeld(key, COMPLETED, first, 'the key after the refused writes');

      const released = freshKey();
      expectKept(
        await kit.store().forget(released, await claim(released, LONG_TTL, first)),
        'forget by the owner',
      );
      await expectAnswer(released, ACQUIRED, 'a released key', LONG_TTL, second);
    });

    it('keeps a claim without a message id, and a message id holding spaces', async (bare) => {
      await claim(bare, LONG_TTL, { fingerprint: first.fingerprint });
      await expectHeld(bare, IN_PROGRESS, { fingerprint: first.fingerprint }, 'no message id');
      const spaced = freshKey();
      const odd = { fingerprint: second.fingerprint, messageId: 'partition 3 offset 17' };
      await claim(spaced, LONG_TTL, odd);
      await expectHeld(spaced, IN_PROGRESS, odd, 'a message id with spaces');
    });

    it('keeps the new claim’s fingerprint once the old lease or dedup window passed', async (leased) => {
      await claim(leased, kit.shortTtl, first);
      await kit.elapse(kit.pastShortTtl);
      await expectAnswer(leased, ACQUIRED, 'a key whose lease expired', LONG_TTL, second);
      await expectHeld(leased, IN_PROGRESS, second, 'the new claim');

      const windowed = freshKey();
      await kit.markComplete(windowed, await claim(windowed, LONG_TTL, first), kit.shortTtl);
      await kit.elapse(kit.pastShortTtl);
      await expectAnswer(windowed, ACQUIRED, 'a key past its ttl', LONG_TTL, second);
      await expectHeld(windowed, IN_PROGRESS, second, 'the new claim');
    });

    it('drops an expired claim’s fingerprint when the key is claimed again without one', async (key) => {
      await claim(key, kit.shortTtl, first);
      await kit.elapse(kit.pastShortTtl);
      const owner = await claim(key);
      await expectHeld(key, IN_PROGRESS, {}, 'a plain claim over an expired fingerprinted one');
      await kit.markComplete(key, owner);
      await expectHeld(key, COMPLETED, {}, 'its completion');
    });

    it(`gives ACQUIRED to exactly one of ${kit.concurrency} concurrent claimers, and the others its fingerprint`, async (key) => {
      const claims = Array.from({ length: kit.concurrency }, (_, index) => ({
        fingerprint: `racer${index}`,
        messageId: `message-${index}`,
      }));
      const answers = await kit.concurrently((peer, i) => kit.answerWith(key, claims[i], peer));
      const winner = onlyWinner(answers.map(({ result }) => result));
      for (const [index, answer] of answers.entries()) {
        if (index === winner) continue;
        assert.equal(answer.result, IN_PROGRESS, `claimer ${index}`);
        // A claimer that met the row mid-write may see no fingerprint yet (it fails as in flight and
        // compares on redelivery); one it does see is the winner's, never another loser's.
        if (answer.fingerprint != null) {
          assert.deepEqual(
            { fingerprint: answer.fingerprint, messageId: answer.messageId },
            claims[winner],
            `claimer ${index} saw a fingerprint that is not the winner's`,
          );
        }
      }
      await expectHeld(key, IN_PROGRESS, claims[winner], 'the key after the race');
    });
  });
}
