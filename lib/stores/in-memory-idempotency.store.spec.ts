import { describeIdempotencyStore } from '../testing';
import { AcquireResult } from './idempotency-store.interface';
import { InMemoryIdempotencyStore } from './in-memory-idempotency.store';

describe('InMemoryIdempotencyStore', () => {
  let now: number;
  let store: InMemoryIdempotencyStore;
  const clock = () => now;

  beforeEach(() => {
    now = 0;
    store = new InMemoryIdempotencyStore({ clock });
  });

  it('answers ACQUIRED, then IN_PROGRESS while claimed, then COMPLETED once completed', async () => {
    expect(await store.tryAcquire('k', 1_000, 'a')).toBe(AcquireResult.ACQUIRED);
    expect(await store.tryAcquire('k', 1_000, 'b')).toBe(AcquireResult.IN_PROGRESS);
    expect(await store.markComplete('k', 5_000, 'a')).toBe(true);
    expect(await store.tryAcquire('k', 1_000, 'c')).toBe(AcquireResult.COMPLETED);
  });

  it('is atomic on one event loop: 1,000 concurrent claimers of one key, one ACQUIRED', async () => {
    const answers = await Promise.all(
      Array.from({ length: 1_000 }, (_, i) => store.tryAcquire('hot', 60_000, `t${i}`)),
    );
    expect(answers.filter((answer) => answer === AcquireResult.ACQUIRED)).toHaveLength(1);
    expect(answers.filter((answer) => answer === AcquireResult.IN_PROGRESS)).toHaveLength(999);
  });

  it('is atomic across keys: 1,000 concurrent duplicates of each of 200 keys, interleaved, one ACQUIRED per key', async () => {
    const keys = 200;
    const claims = Array.from({ length: 1_000 * keys }, (_, i) => {
      const key = `k${i % keys}`; // key 0, 1, ..., 199, 0, 1, ...: duplicates interleave
      return store.tryAcquire(key, 60_000, `t${i}`).then((answer) => ({ key, answer }));
    });
    const acquired = new Map<string, number>();
    let inProgress = 0;
    for (const { key, answer } of await Promise.all(claims)) {
      if (answer === AcquireResult.ACQUIRED) acquired.set(key, (acquired.get(key) ?? 0) + 1);
      else if (answer === AcquireResult.IN_PROGRESS) inProgress++;
    }
    expect(inProgress).toBe(999 * keys);
    expect(acquired.size).toBe(keys);
    expect([...acquired.values()].every((count) => count === 1)).toBe(true);
  });

  it('expires the lease: a crashed claim can be re-acquired after ttl', async () => {
    await store.tryAcquire('k', 1_000, 'crashed');
    now = 999;
    expect(await store.tryAcquire('k', 1_000, 'b')).toBe(AcquireResult.IN_PROGRESS);
    now = 1_000;
    expect(await store.tryAcquire('k', 1_000, 'b')).toBe(AcquireResult.ACQUIRED);
  });

  it('expires a completed key after its ttl; Infinity never expires', async () => {
    await store.tryAcquire('k', 1_000, 'a');
    await store.markComplete('k', 10_000, 'a');
    await store.tryAcquire('forever', 1_000, 'a');
    await store.markComplete('forever', Infinity, 'a');
    now = 9_999;
    expect(await store.tryAcquire('k', 1_000, 'b')).toBe(AcquireResult.COMPLETED);
    now = 10_000;
    expect(await store.tryAcquire('k', 1_000, 'b')).toBe(AcquireResult.ACQUIRED);
    now = Number.MAX_SAFE_INTEGER;
    expect(await store.tryAcquire('forever', 1_000, 'b')).toBe(AcquireResult.COMPLETED);
  });

  describe('fencing', () => {
    beforeEach(async () => {
      await store.tryAcquire('k', 1_000, 'stale');
      now = 1_000; // the stale owner's lease expired
      await store.tryAcquire('k', 1_000, 'owner');
    });

    it("a stale token cannot complete, release or extend the new owner's claim", async () => {
      expect(await store.markComplete('k', 5_000, 'stale')).toBe(false);
      expect(await store.forget('k', 'stale')).toBe(false);
      expect(await store.extend('k', 5_000, 'stale')).toBe(false);
      expect(await store.tryAcquire('k', 1_000, 'x')).toBe(AcquireResult.IN_PROGRESS);
      expect(await store.markComplete('k', 5_000, 'owner')).toBe(true);
      expect(await store.tryAcquire('k', 1_000, 'x')).toBe(AcquireResult.COMPLETED);
    });

    it('a stale token cannot release a key the new owner completed', async () => {
      await store.markComplete('k', 5_000, 'owner');
      expect(await store.forget('k', 'stale')).toBe(false);
      expect(await store.tryAcquire('k', 1_000, 'x')).toBe(AcquireResult.COMPLETED);
    });
  });

  it('completes an expired claim nobody took over (no one else owns it)', async () => {
    await store.tryAcquire('k', 1_000, 'slow');
    now = 2_000;
    expect(await store.markComplete('k', 5_000, 'slow')).toBe(true);
    expect(await store.tryAcquire('k', 1_000, 'x')).toBe(AcquireResult.COMPLETED);
  });

  it('forget releases only its own in-progress claim', async () => {
    await store.tryAcquire('k', 1_000, 'a');
    expect(await store.forget('k', 'b')).toBe(false);
    expect(await store.forget('k', 'a')).toBe(true);
    expect(await store.tryAcquire('k', 1_000, 'b')).toBe(AcquireResult.ACQUIRED);
    expect(await store.forget('absent', 'a')).toBe(true);
  });

  it('extend renews a live claim of its own token only', async () => {
    await store.tryAcquire('k', 1_000, 'a');
    now = 900;
    expect(await store.extend('k', 1_000, 'a')).toBe(true);
    now = 1_800;
    expect(await store.tryAcquire('k', 1_000, 'b')).toBe(AcquireResult.IN_PROGRESS);
    now = 1_900;
    expect(await store.extend('k', 1_000, 'a')).toBe(false); // expired at 1,900
    await store.tryAcquire('c', 1_000, 'a');
    await store.markComplete('c', 1_000, 'a');
    expect(await store.extend('c', 1_000, 'a')).toBe(false); // completed keys are not leases
  });

  it('sweeps expired entries as it goes, so memory stays bounded without timers', async () => {
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 1_000; i++) {
        const key = `r${round}-${i}`;
        await store.tryAcquire(key, 10, 't');
        await store.markComplete(key, 10, 't');
      }
      now += 100; // everything written so far has expired
    }
    // 20,000 keys were written; only recent ones (and a bounded tail of expired ones) remain.
    expect(store.size).toBeLessThan(3_000);
    store.sweepExpired();
    expect(store.size).toBe(0);
  });

  it('maxKeys evicts the oldest completed key first and never an in-flight claim', async () => {
    store = new InMemoryIdempotencyStore({ clock, maxKeys: 3 });
    await store.tryAcquire('inflight', 60_000, 't');
    await store.tryAcquire('done1', 60_000, 't');
    await store.markComplete('done1', 60_000, 't');
    await store.tryAcquire('done2', 60_000, 't');
    await store.markComplete('done2', 60_000, 't');
    await store.tryAcquire('new', 60_000, 't');
    expect(store.size).toBe(3);
    expect(store.evictions).toBe(1);
    expect(await store.tryAcquire('done1', 60_000, 'x')).toBe(AcquireResult.ACQUIRED); // evicted
    expect(await store.tryAcquire('inflight', 60_000, 'x')).toBe(AcquireResult.IN_PROGRESS);
  });

  it('maxKeys full of in-flight claims rejects new claims with a clear error', async () => {
    store = new InMemoryIdempotencyStore({ clock, maxKeys: 2 });
    await store.tryAcquire('a', 60_000, 't');
    await store.tryAcquire('b', 60_000, 't');
    await expect(store.tryAcquire('c', 60_000, 't')).rejects.toThrow('all 2 keys are claims in flight');
  });

  it('refuses a maxKeys that is not a positive integer', () => {
    expect(() => new InMemoryIdempotencyStore({ maxKeys: 0 })).toThrow('maxKeys must be a positive integer');
  });
});

// The conformance kit on a fake clock: expiry is checked without sleeping.
describeIdempotencyStore('InMemoryIdempotencyStore', () => {
  let now = 0;
  return {
    store: new InMemoryIdempotencyStore({ clock: () => now }),
    advanceTime: (ms: number) => {
      now += ms;
    },
  };
});

// And on the real monotonic clock, with short TTLs, as a store without clock control runs it.
describeIdempotencyStore('InMemoryIdempotencyStore (real clock)', () => new InMemoryIdempotencyStore(), {
  shortTtlMs: 20,
});
