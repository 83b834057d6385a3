/** Node timers (`setTimeout`, `setInterval`) take at most 2^31 - 1 ms (about 24.8 days). */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

/**
 * The largest `ttl` (finite; `Infinity` is always accepted) and `inProgressTtl` that work, in ms, each
 * with why: past them a completion fails in the store, or the heartbeat's timer misfires. These are the
 * library's own, what any store gets when it declares none.
 */
export const DEFAULT_TTL_LIMITS = {
  ttl: Number.MAX_SAFE_INTEGER,
  ttlReason:
    'beyond 2^53 - 1 a count of milliseconds is no longer a whole number a store can keep; ' +
    'use Infinity to remember keys forever',
  lease: MAX_TIMER_DELAY_MS,
  leaseReason:
    "the lease is renewed on a Node timer (heartbeat), and Node's timers take at most 2^31 - 1 ms; " +
    'a lease is meant to free a crashed worker’s key, use heartbeat for long handlers',
};

/** The largest `ttl` and `inProgressTtl` the library and a store accept, and why. */
export type TtlLimits = Readonly<typeof DEFAULT_TTL_LIMITS>;

/** The limits with a store's `maxTtlMs` applied (`store` names it in the reason). */
export function ttlLimitsFor(maxTtlMs: number | undefined, store: string): TtlLimits {
  if (maxTtlMs === undefined) return DEFAULT_TTL_LIMITS;
  const reason = `the store ${store} keeps TTLs up to ${maxTtlMs} ms (its maxTtlMs)`;
  return {
    ttl: Math.min(DEFAULT_TTL_LIMITS.ttl, maxTtlMs),
    ttlReason: maxTtlMs < DEFAULT_TTL_LIMITS.ttl ? reason : DEFAULT_TTL_LIMITS.ttlReason,
    lease: Math.min(DEFAULT_TTL_LIMITS.lease, maxTtlMs),
    leaseReason: maxTtlMs < DEFAULT_TTL_LIMITS.lease ? reason : DEFAULT_TTL_LIMITS.leaseReason,
  };
}

/** "about 24.8 days", for error messages. */
export function describeDuration(ms: number): string {
  const units: Array<[number, string]> = [
    [365.25 * 86_400_000, 'years'],
    [86_400_000, 'days'],
    [3_600_000, 'hours'],
    [60_000, 'minutes'],
    [1_000, 'seconds'],
  ];
  for (const [size, name] of units) {
    if (ms < size) continue;
    const count = ms / size;
    // Rounded down to a tenth below 100 (2^31 - 1 ms is "about 24.8 days", as Node says), whole above.
    const shown = count < 100 ? Math.floor(count * 10) / 10 : Math.round(count);
    return `about ${shown.toLocaleString('en-US')} ${name}`;
  }
  return `${ms} ms`;
}
