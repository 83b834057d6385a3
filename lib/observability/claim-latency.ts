import { epochMinuteOf, MinuteDelta, MinuteSeries } from './minute-series';

/**
 * How long the store takes to answer a claim, per minute over the last hour, for the Center's store
 * health: a log-scale histogram (a percentile is its bucket's upper bound).
 */

const FIRST_BUCKET_MS = 0.01;
const BUCKETS_PER_DOUBLING = 4;
/** Buckets: 0.01 ms × 2^(i/4) for i in 0..95; the last one also takes everything slower. */
export const LATENCY_BUCKETS = 96;
/** After the buckets: the failed claims, then the answered ones. */
const CLAIM_ERRORS_INDEX = LATENCY_BUCKETS;
export const CLAIMS_INDEX = LATENCY_BUCKETS + 1;

/** The bucket of a duration: the first whose upper bound is at least `ms`. */
export function latencyBucketOf(ms: number): number {
  if (!(ms > FIRST_BUCKET_MS)) return 0;
  // `| 0` (an int32 for V8): the bucket crosses function calls unboxed.
  const bucket = Math.ceil(Math.log2(ms / FIRST_BUCKET_MS) * BUCKETS_PER_DOUBLING) | 0;
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
  /** Of those, the claims timed (all of them; a fleet's older instances timed a sample): what p50 and p99 are read from. */
  timed: number;
  /** Claims that failed (the store threw, rejected or answered off-protocol). */
  errors: number;
  /** Median claim time (ms, upper bound of its bucket); absent without claims. */
  p50Ms?: number;
  /** 99th percentile (ms, upper bound of its bucket); absent without claims. */
  p99Ms?: number;
}

export class ClaimLatency {
  private readonly series = new MinuteSeries(LATENCY_BUCKETS + 2);

  /** @param clock a test's epoch-ms clock; default `Date.now`. */
  constructor(private readonly clock: () => number = Date.now) {}

  /** The store answered a claim after `ms`. */
  observe(ms: number): void {
    const minute = this.minute();
    this.series.add(minute, CLAIMS_INDEX);
    this.series.add(minute, latencyBucketOf(ms));
  }

  fail(): void {
    this.series.add(this.minute(), CLAIM_ERRORS_INDEX);
  }

  private minute(): number {
    return epochMinuteOf(this.clock());
  }

  /** What was recorded since the last call (for the shared stats store). */
  takeDeltas(): MinuteDelta[] {
    return this.series.takeDeltas(this.clock());
  }

  /** p50, p99 and counts over the last `minutes`. */
  summary(minutes: number): ClaimLatencySummary {
    return summarizeClaims(this.series.window(this.clock(), minutes), minutes);
  }
}

/** p50 and p99 from per-minute histograms (this instance's or the fleet's). */
export function summarizeClaims(
  minutes: ReadonlyArray<{ counts: readonly number[] }>,
  windowMinutes: number,
): ClaimLatencySummary {
  const buckets = new Array<number>(LATENCY_BUCKETS).fill(0);
  let errors = 0;
  let claims = 0;
  for (const { counts } of minutes) {
    for (let i = 0; i < LATENCY_BUCKETS; i++) buckets[i] += counts[i] ?? 0;
    errors += counts[CLAIM_ERRORS_INDEX] ?? 0;
    claims += counts[CLAIMS_INDEX] ?? 0;
  }
  const timed = buckets.reduce((sum, count) => sum + count, 0);
  const summary: ClaimLatencySummary = { windowMinutes, claims: Math.max(claims, timed), timed, errors };
  if (timed > 0) {
    summary.p50Ms = roundMs(percentile(buckets, timed, 0.5));
    summary.p99Ms = roundMs(percentile(buckets, timed, 0.99));
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
