/** The Idempotency Center's counters, per event type and handler: one word for one thing everywhere. */
export const COUNTER_NAMES = [
  /** Handled by the handler (status OK). */
  'handled',
  /** Duplicates of a completed event, acked without running (status DUPLICATE). */
  'duplicates_completed',
  /** Duplicates of an event in flight, failed for redelivery (status IN_PROGRESS). */
  'duplicates_in_flight',
  /** Acked on purpose with a SkipMessageException (status SKIPPED). */
  'skipped',
  /** Failed in the handler or the pipeline (status FAILED). */
  'failed',
  /** Not JSON, not routable or failing validation (status INVALID). */
  'invalid',
  /** Ran without dedup: no key and requireKey: false. */
  'keyless',
  /** A claim lost before its completion or release (lease expired under a running handler). */
  'leases_lost',
  /** The store failed while claiming, completing, releasing or extending. */
  'store_errors',
  /** Handled, but the store failed to record the completion: a later duplicate may run again. */
  'completions_lost',
  /** Failed: the key is held for a payload with another fingerprint (also counted `failed`). */
  'fingerprint_mismatches',
] as const;

/** One of the Idempotency Center's counters (`handled`, `duplicates_completed`, ...). */
export type CounterName = (typeof COUNTER_NAMES)[number];

/** A value for every counter: what happened to the records of one handler or event type. */
export type Counters = Record<CounterName, number>;

/** Every counter at zero. */
export function emptyCounters(): Counters {
  return Object.fromEntries(COUNTER_NAMES.map((name) => [name, 0])) as Counters;
}

/** Adds `source` into `target`, counter by counter. */
export function addCounters(target: Counters, source: Counters): void {
  for (const name of COUNTER_NAMES) target[name] += source[name];
}
