import { describeIdempotencyStore } from '../testing';
import { InMemoryIdempotencyStore } from './in-memory-idempotency.store';

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
