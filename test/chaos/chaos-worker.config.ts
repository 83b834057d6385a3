/**
 * What the controller tells one worker process (in the CHAOS_WORKER environment variable, as JSON).
 * Shared by both sides, so they cannot disagree about a field.
 */
export interface ChaosWorkerConfig {
  /** "w2#3": the third process started in slot 2, as it appears in logs and reports. */
  name: string;
  queueUrl: string;
  sqsEndpoint: string;
  /** The idempotency store's Redis (paused once during the run). */
  storeUrl: string;
  /** The ledger's Redis: never touched by the chaos, so the count of effects survives everything. */
  ledgerUrl: string;
  /** The ledger hash: field = event id, value = times its effect was applied. */
  ledgerKey: string;
  keyPrefix: string;
  /** The service identity of the worker's app (`IdempotencyModule`'s `service`): part of every key. */
  service: string;
  /** Seconds SQS hides a received message. */
  visibilityTimeout: number;
  /** The lease of a claim, in milliseconds. */
  inProgressTtl: number;
  heartbeat: boolean;
  /** Share of attempts that fail with a transient error before their effect. */
  failureRate: number;
  /** Seeds the worker's own random choices (which attempts fail). */
  seed: number;
}

/** Messages from a worker to the controller. */
export type ChaosWorkerReport = { type: 'ready' } | { type: 'stats'; stats: ChaosWorkerStats };

/** Messages from the controller to a worker. */
export type ChaosWorkerCommand = { type: 'die' } | { type: 'stop' };

/** What one worker process saw, cumulative (a killed worker's last ~250 ms are lost). */
export interface ChaosWorkerStats {
  /** Handler calls that reached the idempotency claim. */
  deliveries: number;
  /** Effects applied (HINCRBY done and the claim settled). */
  applied: number;
  /** Copies acked because their event was already completed. */
  duplicatesAcked: number;
  /** Copies failed on purpose because another attempt held the claim. */
  inFlightDuplicates: number;
  /** Attempts that failed with the injected transient error. */
  transientFailures: number;
  /** Attempts of poison events (they always fail). */
  poisonFailures: number;
  /** Records failed closed because the store did not answer. */
  storeErrors: number;
  /** Records rejected before any claim (not JSON, failing validation, no route). */
  invalid: number;
  /** The highest receive count at which an event was applied (how close to the DLQ it came). */
  maxReceiveCountApplied: number;
}

export const NO_STATS: ChaosWorkerStats = {
  deliveries: 0,
  applied: 0,
  duplicatesAcked: 0,
  inFlightDuplicates: 0,
  transientFailures: 0,
  poisonFailures: 0,
  storeErrors: 0,
  invalid: 0,
  maxReceiveCountApplied: 0,
};

/** The line a worker writes (synchronously) just before it SIGKILLs itself. */
export const KILL_LINE = 'chaos: SIGKILL';
