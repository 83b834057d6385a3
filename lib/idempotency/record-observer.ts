import type { CounterName } from './idempotency-counters';
import type { IdempotencyPolicy } from './idempotency-policy';
import type { IdempotencyOutcome } from './idempotency-state';
import type { SqsRecordResult, SqsRecordStatus } from './record-outcome';

/**
 * What the claim and the pipeline tell whoever watches records (the Center's counters, bound under
 * `RECORD_OBSERVER` by `IdempotencyModule`), so neither imports the watcher. Calls are synchronous and never throw.
 */
export interface RecordObserver {
  /** A handler call ended in `status` (a record that reached no handler is counted under `NO_HANDLER`). */
  countCall(
    eventType: string,
    handler: string,
    status: SqsRecordStatus,
    outcome: IdempotencyOutcome | undefined,
    durationMs: number,
  ): void;
  /** A record ended: the Center's recent records and trends (`keyHashed`: show its key's hash only). */
  recordEnded(queue: string, result: SqsRecordResult, receiveCount: number, keyHashed: boolean): void;
  /** Something befell a handler's claim that is no record's status (a lease lost, a store error, ...). */
  countClaimEvent(policy: IdempotencyPolicy, event: ClaimEvent): void;
  /** A claim goes to the store: a mark to hand to `claimAnswered` (-1: this claim is not timed). */
  claimStarted(): number;
  claimAnswered(mark: number): void;
  claimFailed(): void;
}

/** The counters of what befalls a claim rather than a record. */
export type ClaimEvent = Extract<
  CounterName,
  'leases_lost' | 'completions_lost' | 'store_errors' | 'fingerprint_mismatches'
>;

/** The injection token of the `RecordObserver` (optional: without it nothing is counted). */
export const RECORD_OBSERVER = Symbol('RECORD_OBSERVER');
