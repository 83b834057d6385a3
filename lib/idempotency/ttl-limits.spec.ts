import { DEFAULT_TTL_LIMITS, describeDuration, MAX_TIMER_DELAY_MS, ttlLimitsFor } from './ttl-limits';

describe('TTL limits', () => {
  it("are the library's own when the store declares none: 2^53 - 1 ms for ttl, Node's timer limit for the lease", () => {
    expect(ttlLimitsFor(undefined, 'AnyStore')).toBe(DEFAULT_TTL_LIMITS);
    expect(DEFAULT_TTL_LIMITS.ttl).toBe(2 ** 53 - 1);
    expect(DEFAULT_TTL_LIMITS.lease).toBe(2 ** 31 - 1);
    expect(MAX_TIMER_DELAY_MS).toBe(2_147_483_647);
    expect(DEFAULT_TTL_LIMITS.ttlReason).toBe(
      'beyond 2^53 - 1 a count of milliseconds is no longer a whole number a store can keep; use Infinity to remember keys forever',
    );
    expect(DEFAULT_TTL_LIMITS.leaseReason).toBe(
      "the lease is renewed on a Node timer (heartbeat), and Node's timers take at most 2^31 - 1 ms; " +
        'a lease is meant to free a crashed worker’s key, use heartbeat for long handlers',
    );
  });

  it("take a store's smaller maxTtlMs for both, naming the store as the reason", () => {
    const limits = ttlLimitsFor(1_000, 'TinyStore');
    const reason = 'the store TinyStore keeps TTLs up to 1000 ms (its maxTtlMs)';
    expect(limits).toEqual({ ttl: 1_000, ttlReason: reason, lease: 1_000, leaseReason: reason });
  });

  it("keep the library's lease limit and reason when the store's maxTtlMs lies between the two", () => {
    const maxTtlMs = 10 * MAX_TIMER_DELAY_MS;
    const limits = ttlLimitsFor(maxTtlMs, 'BigStore');
    expect(limits).toEqual({
      ttl: maxTtlMs,
      ttlReason: `the store BigStore keeps TTLs up to ${maxTtlMs} ms (its maxTtlMs)`,
      lease: MAX_TIMER_DELAY_MS,
      leaseReason: DEFAULT_TTL_LIMITS.leaseReason,
    });
  });

  it("keep the library's limits and reasons for a store that keeps longer TTLs, or exactly as long", () => {
    for (const maxTtlMs of [Number.MAX_VALUE, Number.MAX_SAFE_INTEGER]) {
      expect(ttlLimitsFor(maxTtlMs, 'HugeStore')).toEqual(DEFAULT_TTL_LIMITS);
    }
    // At exactly the timer limit the limit is the same either way; the library's reason says more.
    expect(ttlLimitsFor(MAX_TIMER_DELAY_MS, 'TimerStore')).toMatchObject({
      lease: MAX_TIMER_DELAY_MS,
      leaseReason: DEFAULT_TTL_LIMITS.leaseReason,
      ttlReason: `the store TimerStore keeps TTLs up to ${MAX_TIMER_DELAY_MS} ms (its maxTtlMs)`,
    });
  });
});

describe('describeDuration', () => {
  it.each([
    [MAX_TIMER_DELAY_MS, 'about 24.8 days'],
    [Number.MAX_SAFE_INTEGER, 'about 285,421 years'],
    [365.25 * 86_400_000, 'about 1 years'],
    [99.99 * 365.25 * 86_400_000, 'about 99.9 years'],
    [150.6 * 365.25 * 86_400_000, 'about 151 years'],
    [86_400_000, 'about 1 days'],
    [86_399_999, 'about 23.9 hours'],
    [3_600_000, 'about 1 hours'],
    [90 * 60_000, 'about 1.5 hours'],
    [60_000, 'about 1 minutes'],
    [59_999, 'about 59.9 seconds'],
    [1_000, 'about 1 seconds'],
    [999, '999 ms'],
    [1, '1 ms'],
  ])('describes %p ms as %p', (ms, text) => {
    expect(describeDuration(ms)).toBe(text);
  });
});
