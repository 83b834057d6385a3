import { describeIdempotencyStore } from '../../testing';
import { AcquireResult } from '../idempotency-store.interface';
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

  it('refuses an option it does not know, naming itself and the nearest known one', () => {
    expect(() => new InMemoryIdempotencyStore({ maxKey: 5 } as never)).toThrow(
      /^InMemoryIdempotencyStore options: unknown option "maxKey"; did you mean "maxKeys"\?/,
    );
  });

  it('declares itself not shared: its keys live in this process only', () => {
    expect(store.shared).toBe(false);
  });

  describe('at the instant a key expires (expiry = now: gone)', () => {
    it('lets any attempt complete a claim whose lease has just run out, and forgets the previous fingerprint', async () => {
      await store.tryAcquire('k', 10, 'a', { fingerprint: 'F', messageId: 'm-1' });
      now = 10;
      // No live claim to protect: as in Redis, where the expired key is simply absent.
      expect(await store.markComplete('k', 1_000, 'b')).toBe(true);
      expect(await store.tryAcquire('k', 10, 'c', { fingerprint: 'G' })).toBe(AcquireResult.COMPLETED);
    });

    it('forgets a completed key for any token, and an expired claim for another token', async () => {
      await store.tryAcquire('done', 1_000, 'a');
      await store.markComplete('done', 10, 'a');
      await store.tryAcquire('lease', 10, 'a');
      now = 10;
      expect(await store.forget('done', 'someone')).toBe(true);
      expect(await store.forget('lease', 'someone-else')).toBe(true);
      expect(store.size).toBe(0);
    });

    it('inspects it as UNKNOWN', async () => {
      await store.tryAcquire('k', 10, 'a');
      now = 10;
      expect(await store.inspect('k')).toEqual({ state: 'UNKNOWN' });
    });

    it('sweeps it as expired', async () => {
      for (let i = 0; i < 3; i++) await store.tryAcquire(`old${i}`, 10, 't');
      store.sweepExpired(); // nothing expired yet; the next sweep starts from the oldest key
      now = 10;
      await store.tryAcquire('new', 10, 't');
      expect(store.size).toBe(1);
    });
  });

  it('inspects a claim with an endless lease without a lease left', async () => {
    await store.tryAcquire('k', Infinity, 'a');
    now = 10 * 365 * 86_400_000;
    expect(await store.inspect('k')).toEqual({ state: 'IN_PROGRESS' });
  });

  it('examines four entries per new key, no more (the sweep is proportional to insertions)', async () => {
    for (let i = 0; i < 10; i++) await store.tryAcquire(`old${i}`, 10, 't');
    store.sweepExpired();
    now = 100;
    await store.tryAcquire('new', 10, 't');
    expect(store.size).toBe(10 + 1 - 4);
  });

  it('clear() forgets every key, claim and fingerprint', async () => {
    await store.tryAcquire('a', 60_000, 't', { fingerprint: 'F' });
    await store.tryAcquire('b', 60_000, 't');
    await store.markComplete('b', 60_000, 't');
    store.clear();
    expect(store.size).toBe(0);
    expect(await store.tryAcquire('a', 60_000, 'u', { fingerprint: 'G' })).toBe(AcquireResult.ACQUIRED);
    expect(await store.tryAcquire('b', 60_000, 'u')).toBe(AcquireResult.ACQUIRED);
  });

  it('names itself in the error for a bad fingerprint claim', async () => {
    await expect(store.tryAcquire('k', 1_000, 't', { fingerprint: 'a b' })).rejects.toThrow(
      'InMemoryIdempotencyStore: a fingerprint must be a non-empty string without spaces, got "a b".',
    );
  });

  describe('maxKeys, when the sweep has not reached an expired key', () => {
    /** maxKeys 5: four completed keys, then `last` claimed with a 10 ms lease; the sweep starts over. */
    async function full() {
      store = new InMemoryIdempotencyStore({ clock, maxKeys: 5 });
      for (let i = 0; i < 4; i++) {
        await store.tryAcquire(`done${i}`, 60_000, 't');
        await store.markComplete(`done${i}`, 60_000, 't');
      }
      await store.tryAcquire('last', 10, 't');
      store.sweepExpired(); // nothing expired: the next sweep examines done0..done3 only
      now = 10; // the lease of "last" ends now
    }

    it('re-claiming the expired key takes its slot: nothing is evicted', async () => {
      await full();
      expect(await store.tryAcquire('last', 60_000, 'u')).toBe(AcquireResult.ACQUIRED);
      expect(store.evictions).toBe(0);
      expect(await store.tryAcquire('done0', 60_000, 'u')).toBe(AcquireResult.COMPLETED);
    });

    it('a new key frees an expired claim before any completed key, without counting an eviction', async () => {
      store = new InMemoryIdempotencyStore({ clock, maxKeys: 11 });
      await store.tryAcquire('first', 10, 't'); // the oldest entry: a claim whose lease ends at 10
      for (let i = 0; i < 8; i++) {
        await store.tryAcquire(`done${i}`, 60_000, 't');
        await store.markComplete(`done${i}`, 60_000, 't');
      }
      await store.markComplete('soon', 5, 't'); // at the back; its expiry wakes the sweep before "first" ends
      now = 6;
      await store.markComplete('x', 60_000, 't'); // the sweep examines first, done0, done1, done2: full now
      now = 10;
      expect(await store.tryAcquire('new', 60_000, 'u')).toBe(AcquireResult.ACQUIRED);
      expect(store.evictions).toBe(0);
      expect(store.warnings).toEqual([]);
      expect(await store.tryAcquire('done0', 60_000, 'u')).toBe(AcquireResult.COMPLETED);
      expect(await store.tryAcquire('first', 60_000, 'u')).toBe(AcquireResult.ACQUIRED);
    });
  });

  it('says what to do when every key is a claim in flight', async () => {
    store = new InMemoryIdempotencyStore({ clock, maxKeys: 1 });
    await store.tryAcquire('a', 60_000, 't');
    await expect(store.tryAcquire('b', 60_000, 't')).rejects.toThrow(
      'InMemoryIdempotencyStore is full: all 1 keys are claims in flight. Raise maxKeys or lower the ' +
        'concurrency; the record will be retried.',
    );
  });
});

// The conformance kit on a fake clock: expiry is checked without sleeping.
// No batch methods: a batch would save it no round trip (store-call-batcher.ts calls it per key).
describeIdempotencyStore(
  'InMemoryIdempotencyStore',
  () => {
    let now = 0;
    return {
      store: new InMemoryIdempotencyStore({ clock: () => now }),
      advanceTime: (ms: number) => {
        now += ms;
      },
    };
  },
  { batches: false },
);

// And on the real monotonic clock, with short TTLs, as a store without clock control runs it.
describeIdempotencyStore('InMemoryIdempotencyStore (real clock)', () => new InMemoryIdempotencyStore(), {
  shortTtlMs: 20,
  batches: false,
});
