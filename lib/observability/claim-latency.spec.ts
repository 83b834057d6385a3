import {
  ClaimLatency,
  CLAIMS_INDEX,
  latencyBucketOf,
  latencyBucketUpperBound,
  LATENCY_BUCKETS,
} from './claim-latency';

const MINUTE = 60_000;

describe('ClaimLatency', () => {
  it('puts every duration in the first bucket whose upper bound holds it (within 19%)', () => {
    expect(latencyBucketOf(0)).toBe(0);
    expect(latencyBucketOf(0.01)).toBe(0);
    for (const ms of [0.0101, 0.05, 0.2, 0.9, 1, 3.7, 42, 999, 60_000]) {
      const bucket = latencyBucketOf(ms);
      expect(latencyBucketUpperBound(bucket)).toBeGreaterThanOrEqual(ms * (1 - 1e-12));
      expect(latencyBucketUpperBound(bucket - 1)).toBeLessThan(ms);
      expect(latencyBucketUpperBound(bucket) / ms).toBeLessThan(1.19);
    }
    expect(latencyBucketOf(1e9)).toBe(LATENCY_BUCKETS - 1);
  });

  it('reads p50 and p99 over the last minutes, and counts failed claims apart', () => {
    let now = Date.parse('2026-11-29T12:00:00.000Z');
    const latency = new ClaimLatency(() => now);
    for (let i = 0; i < 98; i++) latency.observe(0.2);
    latency.observe(40);
    latency.observe(45);
    latency.fail();
    const summary = latency.summary(5);
    expect(summary).toMatchObject({ windowMinutes: 5, claims: 100, errors: 1 });
    expect(summary.p50Ms).toBeGreaterThanOrEqual(0.2);
    expect(summary.p50Ms).toBeLessThan(0.24);
    expect(summary.p99Ms).toBeGreaterThanOrEqual(40);
    expect(summary.p99Ms).toBeLessThan(48);

    // Six minutes later those claims are out of a five-minute window.
    now += 6 * MINUTE;
    latency.observe(1);
    expect(latency.summary(5)).toMatchObject({
      claims: 1,
      errors: 0,
      p50Ms: 1.08, // the upper bound of 1 ms's bucket, to three digits
    });
    expect(latency.summary(60).claims).toBe(101);
  });

  it('hands the increments since the last call to the shared stats store', () => {
    const now = Date.parse('2026-11-29T12:00:00.000Z');
    const latency = new ClaimLatency(() => now);
    latency.observe(0.2);
    latency.observe(0.2);
    latency.fail();
    expect(latency.takeDeltas()).toEqual([
      { minute: now / MINUTE, index: latencyBucketOf(0.2), count: 2 },
      { minute: now / MINUTE, index: LATENCY_BUCKETS, count: 1 },
      { minute: now / MINUTE, index: CLAIMS_INDEX, count: 2 },
    ]);
    expect(latency.takeDeltas()).toEqual([]);
    expect(latency.summary(1)).toMatchObject({ claims: 2, timed: 2, errors: 1 });
  });
});
