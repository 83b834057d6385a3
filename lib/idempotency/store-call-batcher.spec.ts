import {
  AcquireResult,
  BatchClaim,
  BatchCompletion,
  IdempotencyStore,
} from '../stores/idempotency-store.interface';
import { InMemoryIdempotencyStore } from '../stores/in-memory/in-memory-idempotency.store';
import type { BatchCallTracer } from './record-observer';
import { MAX_BATCH_ENTRIES, storeCallsFor } from './store-call-batcher';

/** An in-memory store that says which methods were called, and with how many keys. */
function spiedStore(batches = true) {
  const inner = new InMemoryIdempotencyStore({ maxKeys: Infinity });
  const calls: string[] = [];
  const store: IdempotencyStore = {
    shared: false,
    tryAcquire: (key, ttlMs, token) => (calls.push('tryAcquire'), inner.tryAcquire(key, ttlMs, token)),
    markComplete: (key, ttlMs, token) => (calls.push('markComplete'), inner.markComplete(key, ttlMs, token)),
    forget: (key, token) => inner.forget(key, token),
    ...(batches && {
      tryAcquireMany: (claims: readonly BatchClaim[]) => (
        calls.push(`tryAcquireMany(${claims.length})`),
        Promise.all(claims.map(({ key, ttlMs, token }) => inner.tryAcquire(key, ttlMs, token)))
      ),
      markCompleteMany: (completions: readonly BatchCompletion[]) => (
        calls.push(`markCompleteMany(${completions.length})`),
        Promise.all(completions.map(({ key, ttlMs, token }) => inner.markComplete(key, ttlMs, token)))
      ),
    }),
  };
  return { store, calls };
}

describe('storeCallsFor', () => {
  afterEach(() => jest.useRealTimers());

  it('sends the claims and completions of one turn as one batch call each, answering each key', async () => {
    const { store, calls } = spiedStore();
    const batcher = storeCallsFor(store);
    const answers = await Promise.all([
      batcher.acquire('a', 1_000, 't1'),
      batcher.acquire('b', 1_000, 't2'),
      batcher.acquire('a', 1_000, 't3'), // the same key again: the first entry wins
    ]);
    expect(answers).toEqual([AcquireResult.ACQUIRED, AcquireResult.ACQUIRED, AcquireResult.IN_PROGRESS]);
    expect(
      await Promise.all([batcher.complete('a', 5_000, 't1'), batcher.complete('b', 5_000, 'stale')]),
    ).toEqual([true, false]);
    expect(calls).toEqual(['tryAcquireMany(3)', 'markCompleteMany(2)']);
  });

  it('calls the in-memory store per key, through its own methods (a spy or a subclass sees every call)', async () => {
    const store = new InMemoryIdempotencyStore({ maxKeys: Infinity });
    const tryAcquire = jest.spyOn(store, 'tryAcquire');
    const calls = storeCallsFor(store);
    expect(await Promise.all([calls.acquire('a', 1_000, 't1'), calls.acquire('a', 1_000, 't2')])).toEqual([
      AcquireResult.ACQUIRED,
      AcquireResult.IN_PROGRESS,
    ]);
    expect(await calls.complete('a', 5_000, 'stale')).toBe(false);
    expect(await calls.complete('a', 5_000, 't1')).toBe(true);
    expect(await calls.acquire('a', 1_000, 't3')).toBe(AcquireResult.COMPLETED);
    expect(tryAcquire).toHaveBeenCalledTimes(3);
    expect(store).not.toHaveProperty('tryAcquireMany');
  });

  it('sends a lone call as the single method', async () => {
    const { store, calls } = spiedStore();
    const batcher = storeCallsFor(store);
    expect(await batcher.acquire('a', 1_000, 't1')).toBe(AcquireResult.ACQUIRED);
    expect(await batcher.complete('a', 1_000, 't1')).toBe(true);
    expect(calls).toEqual(['tryAcquire', 'markComplete']);
  });

  it('splits a turn of more than MAX_BATCH_ENTRIES claims into several calls', async () => {
    const { store, calls } = spiedStore();
    const batcher = storeCallsFor(store);
    const count = MAX_BATCH_ENTRIES * 2 + 3;
    const answers = await Promise.all(
      Array.from({ length: count }, (_, i) => batcher.acquire(`k${i}`, 1_000, `t${i}`)),
    );
    expect(answers.every((answer) => answer === AcquireResult.ACQUIRED)).toBe(true);
    expect(calls).toEqual([
      `tryAcquireMany(${MAX_BATCH_ENTRIES})`,
      `tryAcquireMany(${MAX_BATCH_ENTRIES})`,
      'tryAcquireMany(3)',
    ]);
  });

  it('sends a full call at once, while the turn goes on, and the rest when the turn ends', () => {
    const { store, calls } = spiedStore();
    const batcher = storeCallsFor(store);
    const asked = Array.from({ length: MAX_BATCH_ENTRIES + 1 }, (_, i) =>
      batcher.acquire(`k${i}`, 1_000, `t${i}`),
    );
    // Still inside the turn that asked: the full call is already with the store, the extra claim waits.
    expect(calls).toEqual([`tryAcquireMany(${MAX_BATCH_ENTRIES})`]);
    return Promise.all(asked).then((answers) => {
      expect(answers.every((answer) => answer === AcquireResult.ACQUIRED)).toBe(true);
      expect(calls).toEqual([`tryAcquireMany(${MAX_BATCH_ENTRIES})`, 'tryAcquire']);
    });
  });

  it('sends exactly MAX_BATCH_ENTRIES claims as one call, and nothing more when the turn ends', async () => {
    const { store, calls } = spiedStore();
    const batcher = storeCallsFor(store);
    await Promise.all(
      Array.from({ length: MAX_BATCH_ENTRIES }, (_, i) => batcher.acquire(`k${i}`, 1_000, `t${i}`)),
    );
    // The turn's end comes after the full batch went out: it finds nothing left to send.
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual([`tryAcquireMany(${MAX_BATCH_ENTRIES})`]);
  });

  it('sends a turn once: claims asked for while its batch is answered go out with the next turn', async () => {
    const { store, calls } = spiedStore();
    const batcher = storeCallsFor(store);
    let next: Promise<AcquireResult[]> | undefined;
    const first = await Promise.all([
      batcher.acquire('a', 1_000, 't1').then((answer) => {
        // Asked for as the first batch is answered (a FIFO group's next record), and in the next turn.
        const inNextTurn = new Promise<AcquireResult>((resolve) =>
          setImmediate(() => resolve(batcher.acquire('d', 1_000, 't4'))),
        );
        next = Promise.all([batcher.acquire('c', 1_000, 't3'), inNextTurn]);
        return answer;
      }),
      batcher.acquire('b', 1_000, 't2'),
    ]);
    expect(first).toEqual([AcquireResult.ACQUIRED, AcquireResult.ACQUIRED]);
    expect(await next).toEqual([AcquireResult.ACQUIRED, AcquireResult.ACQUIRED]);
    expect(calls).toEqual(['tryAcquireMany(2)', 'tryAcquireMany(2)']);
  });

  it('traces each batch call under its method, linked to exactly the records of that call, turn after turn', async () => {
    const { store } = spiedStore();
    const traced: Array<[method: string, origins: unknown[]]> = [];
    let current = ''; // the record whose context adds an entry (its span, under real tracing)
    const tracer: BatchCallTracer = {
      origin: () => current,
      run: (method, origins, call) => (traced.push([method, [...origins]]), call()),
    };
    const batcher = storeCallsFor(store, () => tracer);
    const as = <T>(record: string, call: () => Promise<T>) => ((current = record), call());
    const claim = (key: string) => as(`record ${key}`, () => batcher.acquire(key, 1_000, `t-${key}`));
    await Promise.all([claim('a'), claim('b')]);
    await claim('lone'); // a lone call goes as the single method, untraced as a batch
    await Promise.all([claim('c'), claim('d')]);
    await Promise.all(
      ['a', 'b'].map((key) => as(`record ${key}`, () => batcher.complete(key, 5_000, `t-${key}`))),
    );
    expect(traced).toEqual([
      ['tryAcquireMany', ['record a', 'record b']],
      ['tryAcquireMany', ['record c', 'record d']],
      ['markCompleteMany', ['record a', 'record b']],
    ]);
  });

  it('calls key by key a store without both batch methods', async () => {
    const { store, calls } = spiedStore(false);
    const batcher = storeCallsFor(store);
    await Promise.all([batcher.acquire('a', 1_000, 't1'), batcher.acquire('b', 1_000, 't2')]);
    expect(calls).toEqual(['tryAcquire', 'tryAcquire']);
  });

  it("is not held up by a test's fake timers", async () => {
    jest.useFakeTimers();
    const { store } = spiedStore();
    const batcher = storeCallsFor(store);
    await expect(
      Promise.all([batcher.acquire('a', 1_000, 't1'), batcher.acquire('b', 1_000, 't2')]),
    ).resolves.toEqual([AcquireResult.ACQUIRED, AcquireResult.ACQUIRED]);
  });
});
