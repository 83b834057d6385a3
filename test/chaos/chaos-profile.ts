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
   * closed, within these bounds. A worker may first wait out command timeouts of completions
   * (2 s each with the recommended settings, and ioredis's auto-pipelining sends the next commands
   * only when the previous ones failed) before its next claims fail. The commands the server held
   * back run when it resumes, in the order they were sent; a completion held back must still find
   * its claim alive then, so the pause stays below inProgressTtl minus the visibility timeout (a
   * redelivered copy's claim can be queued ahead of the completion of a claim made that long before
   * the pause).
   */
  pause: { minMs: number; maxMs: number };
  /** Seconds SQS hides a received message: slow handlers outlive it. */
  visibilityTimeout: number;
  /**
   * The claim's lease: above the slowest handler (3 s) and the store pause (see pauseMs), short
   * enough that the claims orphaned by kills expire within the run.
   */
  inProgressTtl: number;
  /**
   * Receives before SQS dead-letters a message. Every receive of a copy whose claim is held by an
   * attempt that will never finish (a killed worker, a claim that timed out client-side but ran
   * when the store resumed) meets IN_PROGRESS until the lease expires: inProgressTtl /
   * visibilityTimeout (5) receives spent waiting, plus those that failed closed during the pause,
   * plus transient failures: up to about 8 with steady 2 s redeliveries (fewer in practice: a message
   * made visible again queues behind the backlog; the report prints the highest seen). A good event
   * must never be dead-lettered, so 10.
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
  return {
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
    pause: { minMs: 4_000, maxMs: 7_000 },
    visibilityTimeout: 2,
    inProgressTtl: 10_000,
    maxReceiveCount: 10,
    failureRate: 0.05,
    // Generous: the run stops as soon as everything is drained; this only bounds a hung run.
    timeoutMs: 90_000 + events * 40,
  };
}

function positiveInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 1) {
    throw new Error(`${name} must be a positive integer, got ${JSON.stringify(value)}`);
  }
  return parsed;
}
