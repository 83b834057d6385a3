import { Logger } from '@nestjs/common';
import { AcquireResult } from '../idempotency-store.interface';
import { DEFAULT_MAX_KEYS, InMemoryIdempotencyStore } from './in-memory-idempotency.store';

/**
 * The in-memory store lives in the app's heap, so its size must stay bounded on its own: a default
 * `maxKeys` (with a warning the first time it evicts), and expired keys reclaimed as new keys come,
 * without timers. (Bytes per completed key are measured by `npm run bench`.)
 */
describe('InMemoryIdempotencyStore bounds', () => {
  let now: number;
  const clock = () => now;
  let warn: jest.SpyInstance;

  beforeEach(() => {
    now = 0;
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  const complete = async (store: InMemoryIdempotencyStore, key: string, ttlMs = 60_000) => {
    await store.tryAcquire(key, 1_000, `t-${key}`);
    await store.markComplete(key, ttlMs, `t-${key}`);
  };

  it(`holds at most ${DEFAULT_MAX_KEYS.toLocaleString('en-US')} keys by default, evicting the oldest completed`, async () => {
    const store = new InMemoryIdempotencyStore({ clock });
    for (let i = 0; i < DEFAULT_MAX_KEYS + 10; i++) await complete(store, `k${i}`);
    expect(store.size).toBe(DEFAULT_MAX_KEYS);
    expect(store.evictions).toBe(10);
    expect(await store.tryAcquire('k0', 1_000, 'x')).toBe(AcquireResult.ACQUIRED); // evicted: forgotten
    expect(await store.tryAcquire(`k${DEFAULT_MAX_KEYS + 9}`, 1_000, 'x')).toBe(AcquireResult.COMPLETED);
  });

  it('warns once, at the first eviction, and lists it for the Idempotency Center', async () => {
    const store = new InMemoryIdempotencyStore({ clock, maxKeys: 2 });
    await complete(store, 'a');
    await complete(store, 'b');
    expect(warn).not.toHaveBeenCalled();
    expect(store.warnings).toEqual([]);
    await complete(store, 'c');
    await complete(store, 'd');
    expect(warn).toHaveBeenCalledTimes(1);
    const message =
      'reached maxKeys (2) and evicts the oldest completed keys: their dedup window ends early, so a late ' +
      'duplicate of an evicted event runs its handler again. Raise maxKeys (about 125 bytes of heap per key), ' +
      'shorten ttl, or use a shared store such as RedisIdempotencyStore.';
    // The log line is what an operator reads: its format is the subject here.
    expect(warn.mock.calls[0][0]).toBe(`InMemoryIdempotencyStore ${message}`);
    expect(warn.mock.instances[0]).toMatchObject({ context: 'InMemoryIdempotencyStore' });
    expect(store.warnings).toEqual([{ code: 'memory.max-keys', setting: 'maxKeys 2', message }]);
  });

  it('evicts the oldest completion first: a key completed again counts as new', async () => {
    const store = new InMemoryIdempotencyStore({ clock, maxKeys: 3 });
    await complete(store, 'a', 100);
    await complete(store, 'b');
    now = 200; // "a" expired; a redelivery completes it again: now it is the newest
    await complete(store, 'a');
    await complete(store, 'c');
    expect(store.evictions).toBe(0);
    await complete(store, 'd');
    expect(store.evictions).toBe(1);
    expect(await store.tryAcquire('a', 1_000, 'x')).toBe(AcquireResult.COMPLETED);
    expect(await store.tryAcquire('b', 1_000, 'x')).toBe(AcquireResult.ACQUIRED); // the one evicted
  });

  it("evicts by claim: an owner's completion keeps its claim's place, another attempt's goes to the back", async () => {
    const store = new InMemoryIdempotencyStore({ clock, maxKeys: 3 });
    const stateOf = async (key: string) => (await store.inspect(key)).state;
    await store.tryAcquire('slow', 1_000, 'owner'); // claimed first, completed after "a"
    await store.tryAcquire('late', 100, 'first'); // its lease ends before anyone completes it
    await complete(store, 'a');
    expect(await store.markComplete('slow', 60_000, 'owner')).toBe(true); // in place: still the front
    now = 500;
    expect(await store.markComplete('late', 60_000, 'second')).toBe(true); // a new write: at the back
    await complete(store, 'b'); // evicts "slow", the oldest claim, though completed after "a"
    expect([await stateOf('slow'), await stateOf('a')]).toEqual(['UNKNOWN', 'COMPLETED']);
    await complete(store, 'c'); // evicts "a", now before "late"
    expect(store.evictions).toBe(2);
    const states = await Promise.all(['a', 'late', 'b', 'c'].map(stateOf));
    expect(states).toEqual(['UNKNOWN', 'COMPLETED', 'COMPLETED', 'COMPLETED']);
  });

  it('maxKeys: Infinity removes the bound', async () => {
    const store = new InMemoryIdempotencyStore({ clock, maxKeys: Infinity });
    for (let i = 0; i < 1_000; i++) await complete(store, `k${i}`);
    expect(store.size).toBe(1_000);
  });

  it('reclaims expired keys in proportion to insertions, without timers', async () => {
    const store = new InMemoryIdempotencyStore({ clock, maxKeys: Infinity });
    // A burst of 100,000 keys with a short ttl, then they all expire.
    for (let i = 0; i < 100_000; i++) await complete(store, `burst${i}`, 10);
    now += 1_000;
    // Every new key examines 4 entries on its way in, so one lap over the 100,000 expired keys and the
    // new ones themselves takes about 100,000 / 3 new keys: after 40,000, only those are left.
    for (let i = 0; i < 20_000; i++) await complete(store, `next${i}`);
    expect(store.size).toBeLessThan(100_000 - 20_000);
    for (let i = 20_000; i < 40_000; i++) await complete(store, `next${i}`);
    expect(store.size).toBe(40_000);
  });

  it('reclaims expired keys behind keys that live on: the sweep walks on from where it stopped', async () => {
    const store = new InMemoryIdempotencyStore({ clock, maxKeys: Infinity });
    for (let i = 0; i < 5; i++) await store.markComplete(`long${i}`, 1_000_000, 't');
    for (let i = 0; i < 100; i++) await store.markComplete(`short${i}`, 100, 't');
    now = 200;
    for (let i = 0; i < 100; i++) await store.markComplete(`new${i}`, 1_000_000, 't');
    expect(store.size).toBe(105);
  });

  it('wakes the sweep for the keys a lap saw live, once they expire', async () => {
    const store = new InMemoryIdempotencyStore({ clock, maxKeys: Infinity });
    await store.markComplete('soon', 100, 't'); // its expiry starts the first lap
    for (let i = 0; i < 10; i++) await store.markComplete(`later${i}`, 5_000, 't');
    now = 200;
    // A lap removes "soon" and sees the later keys, live; only long-lived keys are written meanwhile.
    for (let i = 0; i < 30; i++) await store.markComplete(`long${i}`, 1_000_000, 't');
    expect(store.size).toBe(40);
    now = 6_000;
    for (let i = 30; i < 60; i++) await store.markComplete(`long${i}`, 1_000_000, 't');
    expect(store.size).toBe(60);
  });

  it('reclaims a lease shortened in place behind the walk of the sweep', async () => {
    const store = new InMemoryIdempotencyStore({ clock, maxKeys: Infinity });
    // A claim with a long lease at the front of the map, then completed keys behind it.
    await store.tryAcquire('held', 1_000_000, 'owner');
    for (let i = 0; i < 100; i++) await complete(store, `k${i}`, 1_000_000);
    now = 2_000; // the completed keys' leases have passed: the sweep walks again
    await complete(store, 'n0', 1_000_000);
    await complete(store, 'n1', 1_000_000); // the walk of this lap is past "held" now
    // "held" renewed shorter, in place, behind the walk: the lap must not rest past it.
    expect(await store.extend('held', 10, 'owner')).toBe(true);
    now = 3_000;
    for (let i = 0; i < 100; i++) await complete(store, `m${i}`, 1_000_000);
    expect(store.size).toBe(202); // every completed key, and not "held"
    expect(await store.tryAcquire('held', 1_000, 'next')).toBe(AcquireResult.ACQUIRED);
  });

  it('goes on evicting oldest first over many laps, passing over claims in flight', async () => {
    const store = new InMemoryIdempotencyStore({ clock, maxKeys: 3 });
    await store.tryAcquire('p', 60_000, 'owner'); // in flight throughout the first evictions
    await complete(store, 'a');
    await complete(store, 'b');
    await complete(store, 'c'); // evicts a, not p
    await complete(store, 'd'); // evicts b
    expect(await store.markComplete('p', 60_000, 'owner')).toBe(true); // completed in its claim's place, behind the walk
    await complete(store, 'e'); // evicts c
    await complete(store, 'f'); // evicts d
    await complete(store, 'g'); // evicts p
    expect(store.evictions).toBe(5);
    const states = await Promise.all(
      ['a', 'b', 'c', 'd', 'p', 'e', 'f', 'g'].map((key) => store.inspect(key)),
    );
    expect(states.map((state) => state.state)).toEqual([
      'UNKNOWN',
      'UNKNOWN',
      'UNKNOWN',
      'UNKNOWN',
      'UNKNOWN',
      'COMPLETED',
      'COMPLETED',
      'COMPLETED',
    ]);
  });

  it('keeps no token once a key is completed: the attempt that completed it no longer owns it', async () => {
    const store = new InMemoryIdempotencyStore({ clock });
    await store.tryAcquire('k', 1_000, 'owner');
    expect(await store.markComplete('k', 60_000, 'owner')).toBe(true);
    expect(await store.extend('k', 1_000, 'owner')).toBe(false);
    expect(await store.forget('k', 'owner')).toBe(false);
    expect(await store.markComplete('k', 60_000, 'owner')).toBe(false);
    expect(await store.tryAcquire('k', 1_000, 'x')).toBe(AcquireResult.COMPLETED);
  });
});
