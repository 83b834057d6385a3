/**
 * The size and knobs of a chaos run. `npm test` runs the short profile; `npm run test:chaos` the
 * long one (CHAOS_PROFILE=long). Each knob can be set from the environment:
 *
 *   CHAOS_EVENTS  logical events (short 2,000, long 20,000)
 *   CHAOS_SEED    seed of the plan (which events are slow, retried, burst; which attempts fail)
 *   CHAOS_KILLS   workers SIGKILLed mid-handler (short 3, long 6)
 */
export interface ChaosProfile {
  name: 'short' | 'long';
  events: number;
  seed: number;
  workers: number;
  kills: number;
  /** Events whose handler always throws; they must end in the DLQ, never applied. */
  poisonEvents: number;
  /** Bodies that can never be decoded (not JSON, failing validation, no route). */
  invalidBodies: number;
  /** Share of events the producer sends again with a new message id (half at once, half later). */
  retryShare: number;
  /** Events sent as a burst of concurrent copies, and how many copies each. */
  bursts: number;
  burstCopies: number;
  /**
   * How long the store's Redis is paused (SIGSTOP ... SIGCONT), once: until records have failed
   * closed, within these bounds. A worker may first wait out the timeouts of its completions (2 s
   * each with the recommended settings, and ioredis's auto-pipelining writes the next commands only
   * once the previous ones failed) before its next claims fail: about 4 to 6 s.
   *
   * The commands the server held back run when it resumes. A completion among them must still find
   * its claim alive then, or a duplicate's claim held back with it (a producer retry, a redelivery)
   * takes the key and the effect runs twice: the pause must end before the lease of a claim made
   * one handler time before it expires, so maxMs stays below inProgressTtl minus the slowest handler
   * (with a margin).
   */
  pause: { minMs: number; maxMs: number };
  /** Seconds SQS hides a received message: slow handlers outlive it. */
  visibilityTimeout: number;
  /** How long the slow handlers (1%) work, in milliseconds: longer than the visibility timeout. */
  slowHandlerMs: { min: number; max: number };
  /**
   * The claim's lease: above the slowest handler plus the store pause (see `pause`), short enough
   * that the claims orphaned by kills expire within the run.
   */
  inProgressTtl: number;
  /**
   * Receives before SQS dead-letters a message. Every receive of a copy whose claim is held by an
   * attempt that will never finish (a killed worker, a claim that timed out client-side but ran
   * when the store resumed) meets IN_PROGRESS until the lease expires: inProgressTtl /
   * visibilityTimeout (6) receives spent waiting, plus those that failed closed during the pause,
   * plus transient failures: up to about 10 with steady 2 s redeliveries (fewer in practice: a
   * message made visible again queues behind the backlog; the report prints the highest seen). A
   * good event must never be dead-lettered, so 12.
   */
  maxReceiveCount: number;
  /** Share of attempts that fail transiently. */
  failureRate: number;
  /** The whole run must finish within this. */
  timeoutMs: number;
}

export function chaosProfile(env: NodeJS.ProcessEnv = process.env): ChaosProfile {
  const long = env.CHAOS_PROFILE === 'long';
  const events = positiveInt(env.CHAOS_EVENTS, 'CHAOS_EVENTS') ?? (long ? 20_000 : 2_000);
  const profile: ChaosProfile = {
    name: long ? 'long' : 'short',
    events,
    seed: positiveInt(env.CHAOS_SEED, 'CHAOS_SEED') ?? 20_260_511,
    workers: 3,
    kills: positiveInt(env.CHAOS_KILLS, 'CHAOS_KILLS') ?? (long ? 6 : 3),
    poisonEvents: 6,
    invalidBodies: 4,
    retryShare: 0.25,
    bursts: Math.max(1, Math.floor(events / 2_000)),
    burstCopies: 25,
    pause: { minMs: 4_000, maxMs: 8_000 },
    visibilityTimeout: 2,
    slowHandlerMs: { min: 2_100, max: 2_500 },
    inProgressTtl: 12_000,
    maxReceiveCount: 12,
    failureRate: 0.05,
    // Generous: the run stops as soon as everything is drained; this only bounds a hung run.
    timeoutMs: 90_000 + events * 40,
  };
  // The bound of `pause` (see there), with a second to spare.
  if (profile.pause.maxMs + profile.slowHandlerMs.max + 1_000 > profile.inProgressTtl) {
    throw new Error('chaos profile: the store pause could outlast a lease; raise inProgressTtl');
  }
  return profile;
}

function positiveInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 1) {
    throw new Error(`${name} must be a positive integer, got ${JSON.stringify(value)}`);
  }
  return parsed;
}
