import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import {
  AcquireResult,
  FingerprintClaim,
  FingerprintedAcquireAnswer,
  IdempotencyStore,
} from '../stores/idempotency-store.interface';
import { KitCaseContext } from './kit-case-context';

/**
 * The conformance kit's cases for the optional part of the protocol, payload fingerprints
 * (`tryAcquireWithFingerprint`). The module compares fingerprints itself; what it needs from a store
 * is that the fingerprint (and message id) a claim kept come back with every later answer about
 * that claim, completed or in flight, and never outlive it: a key claimed again keeps the new
 * claim's fingerprint, or none after a claim without one. Registered by `describeIdempotencyStore`
 * unless `fingerprints: false`.
 */

/** Registers the fingerprint cases. */
export function describeFingerprintCases(kit: KitCaseContext): void {
  const { describe, it, longTtl } = kit;
  const claimOf = (store: IdempotencyStore) => {
    assert.equal(
      typeof store.tryAcquireWithFingerprint,
      'function',
      'the store has no tryAcquireWithFingerprint(); pass { fingerprints: false } to describeIdempotencyStore ' +
        'if it keeps no payload fingerprints (the module then refuses fingerprint options with it)',
    );
    return (key: string, ttlMs: number, token: string, claim: FingerprintClaim) =>
      store.tryAcquireWithFingerprint!(key, ttlMs, token, claim);
  };
  const claim = async (key: string, claimed: FingerprintClaim, ttlMs = longTtl, token = randomUUID()) =>
    checkedAnswer(await claimOf(kit.store())(key, ttlMs, token, claimed));
  const expectHeld = async (
    key: string,
    expected: { result: AcquireResult; fingerprint?: string; messageId?: string },
    why: string,
  ) => {
    const answer = await claim(key, { fingerprint: `probe${Math.random().toString(36).slice(2, 10)}` });
    assert.deepEqual(
      {
        result: answer.result,
        fingerprint: answer.fingerprint ?? undefined,
        messageId: answer.messageId ?? undefined,
      },
      { result: expected.result, fingerprint: expected.fingerprint, messageId: expected.messageId },
      `${why}: tryAcquireWithFingerprint answered ${JSON.stringify(answer)}`,
    );
  };
  const first = { fingerprint: 'Zm9vYmFyYmF6cXV4', messageId: '0f8fad5b-d9cb-469f-a165-70867728950e' };
  const second = { fingerprint: 'cXV1eGJhemJhcmZv', messageId: '7c9e6679-7425-40de-944b-e07fc1f90ae7' };

  describe('payload fingerprints (tryAcquireWithFingerprint)', () => {
    it('answers with the fingerprint and message id the holding claim kept, in flight and once completed', async () => {
      const key = kit.freshKey('fp-kept');
      const owner = randomUUID();
      assert.equal((await claim(key, first, longTtl, owner)).result, AcquireResult.ACQUIRED);
      // The module acks a copy with the same fingerprint as a duplicate, and fails another one.
      await expectHeld(key, { result: AcquireResult.IN_PROGRESS, ...first }, 'a claim in flight');
      assert.deepEqual(
        stripped(await claim(key, second)),
        { result: AcquireResult.IN_PROGRESS, ...first },
        'a claim with another fingerprint must not replace the holder’s',
      );
      assert.notEqual(
        await kit.store().markComplete(key, longTtl, owner),
        false,
        'markComplete by the owner',
      );
      await expectHeld(key, { result: AcquireResult.COMPLETED, ...first }, 'the completed key');
      assert.deepEqual(stripped(await claim(key, first)), { result: AcquireResult.COMPLETED, ...first });
    });

    it('answers plain tryAcquire and fences as for a claim without a fingerprint', async () => {
      const key = kit.freshKey('fp-plain');
      const owner = randomUUID();
      await claim(key, first, longTtl, owner);
      const store = kit.store();
      assert.equal(await store.tryAcquire(key, longTtl, randomUUID()), AcquireResult.IN_PROGRESS);
      // Another attempt, even one whose token starts with the owner's, owns nothing.
      for (const other of [randomUUID(), owner.slice(0, 8)]) {
        assert.equal(await store.markComplete(key, longTtl, other), false, `markComplete by token ${other}`);
        assert.equal(await store.forget(key, other), false, `forget by token ${other}`);
        if (typeof store.extend === 'function') {
          assert.equal(await store.extend(key, longTtl, other), false, `extend by token ${other}`);
        }
      }
      if (typeof store.extend === 'function') {
        assert.equal(await store.extend(key, longTtl, owner), true, 'extend by the owner');
      }
      assert.notEqual(await store.markComplete(key, longTtl, owner), false, 'markComplete by the owner');
      assert.equal(
        await store.tryAcquire(key, longTtl, randomUUID()),
        AcquireResult.COMPLETED,
        'plain tryAcquire of a key completed with a fingerprint',
      );
      assert.equal(await store.forget(key, owner), false, 'forget of a completed key');
      await expectHeld(
        key,
        { result: AcquireResult.COMPLETED, ...first },
        'the key after the refused writes',
      );

      const released = kit.freshKey('fp-released');
      const releaser = randomUUID();
      await claim(released, first, longTtl, releaser);
      assert.notEqual(await store.forget(released, releaser), false, 'forget by the owner');
      assert.equal((await claim(released, second)).result, AcquireResult.ACQUIRED, 'a released key');
    });

    it('keeps no fingerprint for a claim made without one: nothing to compare', async () => {
      const key = kit.freshKey('fp-none');
      const owner = randomUUID();
      assert.equal(await kit.store().tryAcquire(key, longTtl, owner), AcquireResult.ACQUIRED);
      await expectHeld(key, { result: AcquireResult.IN_PROGRESS }, 'a key claimed by tryAcquire');
      await kit.store().markComplete(key, longTtl, owner);
      await expectHeld(key, { result: AcquireResult.COMPLETED }, 'a key claimed by tryAcquire, completed');
    });

    it('keeps a claim without a message id, and a message id holding spaces', async () => {
      const bare = kit.freshKey('fp-no-id');
      await claim(bare, { fingerprint: first.fingerprint });
      await expectHeld(
        bare,
        { result: AcquireResult.IN_PROGRESS, fingerprint: first.fingerprint },
        'no message id',
      );
      const spaced = kit.freshKey('fp-spaced-id');
      const odd = { fingerprint: second.fingerprint, messageId: 'partition 3 offset 17' };
      await claim(spaced, odd);
      await expectHeld(spaced, { result: AcquireResult.IN_PROGRESS, ...odd }, 'a message id with spaces');
    });

    it('keeps the new claim’s fingerprint once the old lease or dedup window passed', async () => {
      const leased = kit.freshKey('fp-lease');
      await claim(leased, first, kit.shortTtl);
      await kit.elapse(kit.pastShortTtl);
      assert.equal((await claim(leased, second)).result, AcquireResult.ACQUIRED, 'a key whose lease expired');
      await expectHeld(leased, { result: AcquireResult.IN_PROGRESS, ...second }, 'the new claim');

      const windowed = kit.freshKey('fp-ttl');
      const owner = randomUUID();
      await claim(windowed, first, longTtl, owner);
      await kit.store().markComplete(windowed, kit.shortTtl, owner);
      await kit.elapse(kit.pastShortTtl);
      assert.equal((await claim(windowed, second)).result, AcquireResult.ACQUIRED, 'a key past its ttl');
      await expectHeld(windowed, { result: AcquireResult.IN_PROGRESS, ...second }, 'the new claim');
    });

    it('drops an expired claim’s fingerprint when the key is claimed again without one', async () => {
      const key = kit.freshKey('fp-dropped');
      await claim(key, first, kit.shortTtl);
      await kit.elapse(kit.pastShortTtl);
      const owner = randomUUID();
      assert.equal(await kit.store().tryAcquire(key, longTtl, owner), AcquireResult.ACQUIRED);
      await expectHeld(
        key,
        { result: AcquireResult.IN_PROGRESS },
        'a plain claim over an expired fingerprinted one',
      );
      await kit.store().markComplete(key, longTtl, owner);
      await expectHeld(key, { result: AcquireResult.COMPLETED }, 'its completion');
    });

    it(`gives ACQUIRED to exactly one of ${kit.concurrency} concurrent claimers, and the others its fingerprint`, async () => {
      const key = kit.freshKey('fp-race');
      const stores = kit.stores();
      const claims = Array.from({ length: kit.concurrency }, (_, index) => ({
        fingerprint: `racer${index}`,
        messageId: `message-${index}`,
      }));
      const answers = await Promise.all(
        claims.map(async (claimed, index) =>
          checkedAnswer(await claimOf(stores[index % stores.length])(key, longTtl, randomUUID(), claimed)),
        ),
      );
      const winners = answers.flatMap((answer, index) =>
        answer.result === AcquireResult.ACQUIRED ? [index] : [],
      );
      assert.equal(winners.length, 1, `${winners.length} claimers got ACQUIRED`);
      const winner = claims[winners[0]];
      for (const [index, answer] of answers.entries()) {
        if (index === winners[0]) continue;
        assert.equal(answer.result, AcquireResult.IN_PROGRESS, `claimer ${index}`);
        // A claimer that met the row mid-write may see no fingerprint yet (it fails as in flight and
        // compares on redelivery); one it does see is the winner's, never another loser's.
        if (answer.fingerprint != null) {
          assert.deepEqual(
            { fingerprint: answer.fingerprint, messageId: answer.messageId },
            winner,
            `claimer ${index} saw a fingerprint that is not the winner's`,
          );
        }
      }
      await expectHeld(key, { result: AcquireResult.IN_PROGRESS, ...winner }, 'the key after the race');
    });
  });
}

/** The answer, after checking its shape: `{ result, fingerprint?, messageId? }`. */
function checkedAnswer(answer: unknown): FingerprintedAcquireAnswer {
  assert.ok(
    answer !== null && typeof answer === 'object',
    `tryAcquireWithFingerprint must resolve to { result, fingerprint?, messageId? }, got ${String(answer)}`,
  );
  const { result, fingerprint, messageId } = answer as Record<string, unknown>;
  assert.ok(
    result === AcquireResult.ACQUIRED ||
      result === AcquireResult.COMPLETED ||
      result === AcquireResult.IN_PROGRESS,
    `tryAcquireWithFingerprint answered result ${JSON.stringify(result)}, not an AcquireResult`,
  );
  for (const [name, value] of Object.entries({ fingerprint, messageId })) {
    assert.ok(
      value === undefined || value === null || typeof value === 'string',
      `tryAcquireWithFingerprint answered ${name} ${JSON.stringify(value)}, not a string or absent`,
    );
  }
  return answer as FingerprintedAcquireAnswer;
}

/** The answer's three fields, `null` read as absent, for deep comparisons. */
function stripped(answer: FingerprintedAcquireAnswer): Record<string, unknown> {
  const fields: Record<string, unknown> = { result: answer.result };
  if (answer.fingerprint != null) fields.fingerprint = answer.fingerprint;
  if (answer.messageId != null) fields.messageId = answer.messageId;
  return fields;
}
