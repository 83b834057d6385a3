import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { inspect as show } from 'node:util';
import { AcquireResult } from '../stores/idempotency-store.interface';
import {
  expectKept,
  expectLost,
  INSPECT_TIME,
  KitCaseContext,
  LONG_TTL,
  onlyWinner,
} from './kit-case-context';

const { ACQUIRED, IN_PROGRESS, COMPLETED } = AcquireResult;

/**
 * The conformance kit's cases for the protocol every store has (`tryAcquire`, `markComplete`,
 * `forget`) and for `extend` and `inspect` unless the options say the store has none.
 */
export function describeCoreCases(kit: KitCaseContext): void {
  const { describe, it, store, freshKey, elapse, expectAnswer, claim, complete, expectCompletion } = kit;

  describe('the shape of its answers', () => {
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
        const key = freshKey();
        await complete(key, maxTtlMs, Math.min(maxTtlMs, 2_147_483_647));
        await expectAnswer(key, COMPLETED, 'a key completed with ttl = maxTtlMs');
      }
    });
  });

  describe('the three answers', () => {
    it('answers ACQUIRED first, IN_PROGRESS while claimed, COMPLETED once completed', async (key) => {
      const owner = await claim(key);
      await expectAnswer(key, IN_PROGRESS, 'a claimed key');
      await expectCompletion(key, owner, 'markComplete');
      await expectAnswer(key, COMPLETED, 'a completed key');
      await expectAnswer(key, COMPLETED, 'a completed key, asked again');
    });
  });

  describe('atomicity', () => {
    it(`gives ACQUIRED to exactly one of ${kit.concurrency} concurrent claimers of one key`, async (key) => {
      const tokens = Array.from({ length: kit.concurrency }, () => randomUUID());
      const answers = await kit.concurrently((peer, i) => peer.tryAcquire(key, LONG_TTL, tokens[i]));
      const winner = onlyWinner(answers);
      assert.equal(
        answers.filter((answer) => answer === IN_PROGRESS).length,
        kit.concurrency - 1,
        'every other claimer must get IN_PROGRESS',
      );
      // The winner's token is the one that owns the key.
      for (const [index, token] of tokens.entries()) {
        if (index !== winner) expectLost(await store().forget(key, token), 'forget by a loser');
      }
      await expectCompletion(key, tokens[winner], 'markComplete by the winner');
    });

    it(`answers COMPLETED to ${kit.concurrency} concurrent claimers of a completed key`, async (key) => {
      await complete(key);
      const answers = await kit.concurrently(() => store().tryAcquire(key, LONG_TTL, randomUUID()));
      assert.deepEqual(new Set(answers), new Set([COMPLETED]));
    });

    it(`gives ACQUIRED to ${kit.concurrency} concurrent claimers of distinct keys`, async () => {
      const answers = await kit.concurrently(() => store().tryAcquire(freshKey(), LONG_TTL, randomUUID()));
      assert.deepEqual(new Set(answers), new Set([ACQUIRED]));
    });
  });

  describe('expiry', () => {
    it('remembers a completed key for ttl, then forgets it', async (key) => {
      await complete(key, kit.shortTtl);
      await expectAnswer(key, COMPLETED, 'a completed key within its ttl');
      await elapse(kit.pastShortTtl);
      await expectAnswer(key, ACQUIRED, 'a completed key past its ttl');
    });

    it('replaces the lease with the ttl on completion', async (key) => {
      await complete(key, LONG_TTL, kit.shortTtl * 4);
      await elapse(kit.shortTtl * 4 + kit.pastShortTtl);
      await expectAnswer(key, COMPLETED, 'a completed key past its former lease');
    });

    it('remembers a key completed with ttl Infinity', async (key) => {
      await complete(key, Infinity, kit.shortTtl);
      // With a fake clock, ten years; in real time, past the lease it replaced.
      await elapse(kit.fakeClock ? 10 * 365 * 86_400_000 : kit.pastShortTtl);
      await expectAnswer(key, COMPLETED, 'a key completed with ttl Infinity');
    });

    it('accepts fractional TTLs', async (key) => {
      await complete(key, LONG_TTL + 0.25, LONG_TTL + 0.5);
      await expectAnswer(key, COMPLETED, 'a key completed with a fractional ttl');
    });

    it('a sub-millisecond TTL still expires (rounded up, never to "no expiry")', async (lease) => {
      // A store that rounds 0.4 ms down to 0 may write "no expiry" (Redis PX 0, a NULL column):
      // the lease of a crashed worker, or a completed key, would then hold forever.
      await claim(lease, 0.4);
      const completed = freshKey();
      await complete(completed, 0.4);
      await elapse(kit.pastShortTtl);
      await expectAnswer(lease, ACQUIRED, 'a key whose sub-millisecond lease passed');
      await expectAnswer(completed, ACQUIRED, 'a key completed with a sub-millisecond ttl, past it');
    });
  });

  describe('fencing', () => {
    it('keeps a stale owner from completing, releasing or extending the next owner’s claim', async (key) => {
      const stale = await claim(key, kit.shortTtl);
      await elapse(kit.pastShortTtl);
      // A crashed worker's lease frees the key for the next claimer.
      const next = await expectAnswer(key, ACQUIRED, 'a key whose lease expired');
      await kit.expectRefused(key, stale, 'the stale owner');
      await expectAnswer(key, IN_PROGRESS, 'the next owner’s claim after the stale writes');
      await expectCompletion(key, next, 'markComplete by the next owner');
      await expectAnswer(key, COMPLETED, 'the key the next owner completed');
    });

    it('keeps another attempt from completing or releasing a live claim', async (key) => {
      const owner = await claim(key);
      await kit.expectRefused(key, randomUUID(), 'another attempt');
      await expectAnswer(key, IN_PROGRESS, 'the owner’s claim');
      expectKept(await store().forget(key, owner), 'forget by the owner');
      await expectAnswer(key, ACQUIRED, 'the key the owner released');
    });

    it('completes an expired claim nobody took over', async (key) => {
      const owner = await claim(key, kit.shortTtl);
      await elapse(kit.pastShortTtl);
      await expectCompletion(key, owner, 'markComplete after the lease expired');
      await expectAnswer(key, COMPLETED, 'the key completed late');
    });

    it('never releases a completed key, not even for the attempt that completed it', async (key) => {
      const owner = await complete(key);
      expectLost(await store().forget(key, randomUUID()), 'forget of a completed key by another attempt');
      expectLost(await store().forget(key, owner), 'forget of a completed key by its owner');
      await expectAnswer(key, COMPLETED, 'a completed key after forget');
    });
  });

  describe('forget', () => {
    it('succeeds when there is nothing to release', async (key) => {
      expectKept(await store().forget(key, randomUUID()), 'forget of an absent key');
      const owner = await claim(key, kit.shortTtl);
      await elapse(kit.pastShortTtl);
      expectKept(await store().forget(key, owner), 'forget after the lease expired');
      await expectAnswer(key, ACQUIRED, 'the key after a late forget');
    });
  });

  if (kit.has.inspect) {
    describe('inspect (read-only, for the key lookup)', () => {
      // Fields present but undefined compare as absent.
      const inspect = async (key: string) =>
        Object.fromEntries(Object.entries(await store().inspect!(key)).filter(([, ms]) => ms !== undefined));
      const expectUnknown = async (key: string, why: string) =>
        assert.deepEqual(await inspect(key), { state: 'UNKNOWN' }, why);
      // The state, and the time left on it: in (low, high] ms.
      const expectTimeLeft = async (key: string, state: string, low: number, high: number) => {
        const seen = await inspect(key);
        const left = seen[INSPECT_TIME[state]!];
        assert.ok(
          seen.state === state && typeof left === 'number' && left > low && left <= high + 1,
          `inspect must answer ${state} with the time left (${low} < ms <= ${high}), got ${show(seen)}`,
        );
      };

      it('answers UNKNOWN for a key never claimed, and claims nothing', async (key) => {
        await expectUnknown(key, 'inspect of a key never claimed');
        await expectAnswer(key, ACQUIRED, 'a key after inspect');
      });

      it('answers IN_PROGRESS with the lease left, and never extends the lease', async (key) => {
        const lease = kit.shortTtl * 4;
        await claim(key, lease);
        await expectTimeLeft(key, 'IN_PROGRESS', 0, lease);
        await elapse(lease + kit.pastShortTtl);
        await expectUnknown(key, 'inspect of a claim past its lease');
        await expectAnswer(key, ACQUIRED, 'a key inspected while claimed, past its lease');
      });

      it('answers COMPLETED with the time left in the dedup window, none for ttl Infinity', async (key) => {
        await complete(key);
        await expectTimeLeft(key, 'COMPLETED', LONG_TTL / 2, LONG_TTL);
        await expectAnswer(key, COMPLETED, 'a completed key after inspect');
        const forever = freshKey();
        await complete(forever, Infinity);
        assert.deepEqual(
          await inspect(forever),
          { state: 'COMPLETED' },
          'a key completed with ttl Infinity: COMPLETED without expiresInMs',
        );
      });

      it('answers UNKNOWN for a released key and for one past its dedup window', async (released) => {
        await store().forget(released, await claim(released));
        await expectUnknown(released, 'inspect of a released key');
        const expired = freshKey();
        await complete(expired, kit.shortTtl);
        await elapse(kit.pastShortTtl);
        await expectUnknown(expired, 'inspect past the dedup window');
      });
    });
  }

  if (kit.has.extend) {
    describe('extend', () => {
      it('pushes the owner’s lease forward', async (key) => {
        assert.equal(await kit.extend(key, await claim(key, kit.shortTtl * 4)), true, 'extend by the owner');
        await elapse(kit.shortTtl * 4 + kit.pastShortTtl);
        await expectAnswer(key, IN_PROGRESS, 'an extended claim past its first lease');
      });

      it('answers false to another attempt and leaves the lease alone', async (key) => {
        await claim(key, kit.shortTtl);
        expectLost(await kit.extend(key, randomUUID()), 'extend by another attempt');
        await elapse(kit.pastShortTtl);
        await expectAnswer(key, ACQUIRED, 'a claim another attempt tried to extend');
      });

      it('does not resurrect an expired lease', async (key) => {
        const owner = await claim(key, kit.shortTtl);
        await elapse(kit.pastShortTtl);
        expectLost(await kit.extend(key, owner), 'extend of an expired lease');
        await expectAnswer(key, ACQUIRED, 'a key whose lease expired before extend');
      });

      it('does not extend a completed key', async (key) => {
        expectLost(await kit.extend(key, await complete(key)), 'extend of a completed key');
        await expectAnswer(key, COMPLETED, 'a completed key after extend');
      });
    });
  }
}
