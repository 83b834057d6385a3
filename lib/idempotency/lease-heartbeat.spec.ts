import type { IdempotencyStore } from '../stores/idempotency-store.interface';
import { LeaseHeartbeat } from './lease-heartbeat';

/**
 * The heartbeat's timing on a fake clock (Jest's fake timers move `performance.now()` with the
 * timers): the e2e specs (redis-heartbeat, lambda-lease-deadline) show it on real stores, this pins
 * the edges they cannot reach exactly, such as a beat that lands 1 ms before the host's deadline.
 */
describe('LeaseHeartbeat', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** A store that only renews, recording the lease it was asked for each time. */
  function renewingStore(): { store: IdempotencyStore; extensions: number[] } {
    const extensions: number[] = [];
    const store = {
      extend: async (_key: string, ttlMs: number) => {
        extensions.push(ttlMs);
        return true;
      },
    } as unknown as IdempotencyStore;
    return { store, extensions };
  }

  const quiet = { lost: () => {}, failed: () => {} };

  it('renews every third of the lease, never past the deadline, down to its last millisecond', async () => {
    const { store, extensions } = renewingStore();
    const lease = 300;
    // The second beat comes exactly 1 ms before the host ends the attempt.
    const deadline = performance.now() + 2 * (lease / 3) + 1;
    const heartbeat = new LeaseHeartbeat(store, 'key', lease, 'token', deadline, quiet);
    try {
      await jest.advanceTimersByTimeAsync(lease / 3 - 1);
      expect(extensions).toEqual([]);
      await jest.advanceTimersByTimeAsync(1);
      expect(extensions).toEqual([101]); // the time left, shorter than a lease
      await jest.advanceTimersByTimeAsync(lease / 3);
      expect(extensions).toEqual([101, 1]); // 1 ms left: the lease still ends at the deadline
      await jest.advanceTimersByTimeAsync(lease);
      expect(extensions).toEqual([101, 1]); // past it: nothing left to renew, and it stopped
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      heartbeat.stop();
    }
  });

  it('renews a whole lease when the deadline is far', async () => {
    const { store, extensions } = renewingStore();
    const heartbeat = new LeaseHeartbeat(store, 'key', 30, 'token', Infinity, quiet);
    try {
      await jest.advanceTimersByTimeAsync(30);
      expect(extensions).toEqual([30, 30, 30]);
    } finally {
      heartbeat.stop();
    }
    await jest.advanceTimersByTimeAsync(30);
    expect(extensions).toEqual([30, 30, 30]);
  });
});
