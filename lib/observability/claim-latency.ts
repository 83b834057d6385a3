import { MinuteDelta, MinuteSeries } from './minute-series';

/**
 * How long the store takes to answer a claim (`tryAcquire`), per minute over the last hour, for the
 * Idempotency Center's store health: p50 and p99 over the last minutes, and the claims that failed.
 *
 * Every message claims, so recording must cost nothing measurable: a fixed histogram of log-scale
 * buckets (four per doubling, from 10 µs to about 168 s), counted into a preallocated per-minute
 * series. One `Math.log2` and one increment per claim; no allocation, no sorting. A percentile read
 * from it is the upper bound of its bucket: at most 19% above the true value (2^(1/4)).
 */

/** Upper bound of the first bucket, in milliseconds. */
const FIRST_BUCKET_MS = 0.01;
const BUCKETS_PER_DOUBLING = 4;
/** Buckets: 0.01 ms × 2^(i/4) for i in 0..95; the last one also takes everything slower. */
export const LATENCY_BUCKETS = 96;
/** Index of the failed-claims counter, after the buckets. */
export const CLAIM_ERRORS_INDEX = LATENCY_BUCKETS;

/** The bucket of a duration: the first whose upper bound is at least `ms`. */
export function latencyBucketOf(ms: number): number {
  if (!(ms > FIRST_BUCKET_MS)) return 0;
  const bucket = Math.ceil(Math.log2(ms / FIRST_BUCKET_MS) * BUCKETS_PER_DOUBLING);
  return bucket < LATENCY_BUCKETS ? bucket : LATENCY_BUCKETS - 1;
}

/** The largest duration (ms) a bucket holds. */
export function latencyBucketUpperBound(bucket: number): number {
  return FIRST_BUCKET_MS * 2 ** (bucket / BUCKETS_PER_DOUBLING);
}

/** Claim latency over a window of minutes. */
export interface ClaimLatencySummary {
  /** The window, in minutes up to now. */
  windowMinutes: number;
  /** Claims answered in the window. */
  claims: number;
  /** Claims that failed (the store threw, rejected or answered off-protocol). */
  errors: number;
  /** Median claim time (ms, upper bound of its bucket); absent without claims. */
  p50Ms?: number;
  /** 99th percentile (ms, upper bound of its bucket); absent without claims. */
  p99Ms?: number;
}

export class ClaimLatency {
  private readonly series = new MinuteSeries(LATENCY_BUCKETS + 1);

  constructor(private readonly clock: () => number = Date.now) {}

  /** Records one claim the store answered in `ms`. */
  observe(ms: number): void {
    this.series.add(this.clock(), latencyBucketOf(ms));
  }

  /** Records one claim the store failed. */
  fail(): void {
    this.series.add(this.clock(), CLAIM_ERRORS_INDEX);
  }

  /** Per-minute buckets for the last `minutes`, oldest first (bucket counts, then errors). */
  window(minutes: number): Array<{ minute: number; counts: number[] }> {
    return this.series.window(this.clock(), minutes);
  }

  /** What was recorded since the last call (for the shared stats store). */
  takeDeltas(): MinuteDelta[] {
    return this.series.takeDeltas(this.clock());
  }

  /** p50, p99 and counts over the last `minutes`. */
  summary(minutes: number): ClaimLatencySummary {
    return summarizeClaims(this.window(minutes), minutes);
  }
}

/**
 * Adds up per-minute histograms (this instance's, or the fleet's) and reads p50 and p99 from them.
 * `minutes` lists each minute's counters as `ClaimLatency` lays them out.
 */
export function summarizeClaims(
  minutes: ReadonlyArray<{ counts: readonly number[] }>,
  windowMinutes: number,
): ClaimLatencySummary {
  const buckets = new Array<number>(LATENCY_BUCKETS).fill(0);
  let errors = 0;
  for (const { counts } of minutes) {
    for (let i = 0; i < LATENCY_BUCKETS; i++) buckets[i] += counts[i] ?? 0;
    errors += counts[CLAIM_ERRORS_INDEX] ?? 0;
  }
  const claims = buckets.reduce((sum, count) => sum + count, 0);
  const summary: ClaimLatencySummary = { windowMinutes, claims, errors };
  if (claims > 0) {
    summary.p50Ms = roundMs(percentile(buckets, claims, 0.5));
    summary.p99Ms = roundMs(percentile(buckets, claims, 0.99));
  }
  return summary;
}

function percentile(buckets: readonly number[], total: number, q: number): number {
  const rank = Math.ceil(q * total);
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    seen += buckets[i];
    if (seen >= rank) return latencyBucketUpperBound(i);
  }
  return latencyBucketUpperBound(buckets.length - 1);
}

/** Three significant digits: the buckets are not finer than that. */
function roundMs(ms: number): number {
  return Number(ms.toPrecision(3));
}
