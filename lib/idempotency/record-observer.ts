import type { AcquireResult } from '../stores/idempotency-store.interface';
import type { CounterName } from './idempotency-counters';
import type { IdempotencyPolicy } from './idempotency-policy';
import type { IdempotencyOutcome } from './idempotency-state';
import type { SqsRecordResult, SqsRecordStatus } from './record-outcome';

/** Handler name used for records that never reached a handler (invalid ones). */
export const NO_HANDLER = '-';
/** Event type used for records whose type could not be read. */
export const UNKNOWN_EVENT_TYPE = '(unknown)';

/**
 * What the claim and the pipeline tell whoever watches records (the Center's counters and journal,
 * OpenTelemetry metrics), so neither imports the watcher. Calls are synchronous and never throw. Hooks
 * that a later observer needs around the handler call (tracing) join as optional members.
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
  /** The store answered a claim (`answer`) after `durationMs`. */
  claimAnswered(durationMs: number, answer: AcquireResult): void;
  claimFailed(): void;
}

/**
 * Runs a store call made for several records (one `tryAcquireMany` for a turn's claims) under a span
 * of its own, linked to the records it serves, so the client's own spans (ioredis, pg, the AWS SDK)
 * land there rather than under whichever record scheduled the call (tracing installs it).
 */
export interface BatchCallTracer {
  /** The record the current context runs (its span's context), taken where a record adds its entry. */
  origin(): unknown;
  /** Runs `call` for the records of `origins` under the batch call's span, named for `method`. */
  run<T>(method: string, origins: readonly unknown[], call: () => Promise<T>): Promise<T>;
}

/** The counters of what befalls a claim rather than a record. */
export type ClaimEvent = Extract<
  CounterName,
  'leases_lost' | 'completions_lost' | 'store_errors' | 'fingerprint_mismatches'
>;

/**
 * The observers of one app, installed at bootstrap by what the app configures (`stats` or the Center
 * installs the counters, a meter provider the metrics), each loaded only there. Provided by
 * `IdempotencyModule`; the claim and the pipeline read `current` where a record or claim starts.
 */
export class RecordObservers {
  /**
   * Where a store call made for several records runs (a claim batch): under a span of its own, linked
   * to the records' spans, once tracing is on; `undefined` otherwise.
   */
  batchCalls: BatchCallTracer | undefined = undefined;

  /**
   * `undefined` with none (nothing is counted: the per-record path skips every call), the one installed,
   * or one that hands each call to all of them in the order installed.
   */
  current: RecordObserver | undefined = undefined;
  private readonly installed: RecordObserver[] = [];

  /** Installs `observer` (once: installing it again changes nothing). */
  add(observer: RecordObserver): void {
    if (this.installed.includes(observer)) return;
    this.installed.push(observer);
    this.current = this.installed.length === 1 ? observer : new RecordObserverFanOut([...this.installed]);
  }

  /** The installed observer of class `type`, if any. */
  find<T extends RecordObserver>(type: abstract new (...args: never[]) => T): T | undefined {
    return this.installed.find((observer): observer is T => observer instanceof type);
  }
}

/** Several observers as one. */
class RecordObserverFanOut implements RecordObserver {
  constructor(private readonly all: readonly RecordObserver[]) {}

  countCall(
    eventType: string,
    handler: string,
    status: SqsRecordStatus,
    outcome: IdempotencyOutcome | undefined,
    durationMs: number,
  ): void {
    for (const observer of this.all) observer.countCall(eventType, handler, status, outcome, durationMs);
  }

  recordEnded(queue: string, result: SqsRecordResult, receiveCount: number, keyHashed: boolean): void {
    for (const observer of this.all) observer.recordEnded(queue, result, receiveCount, keyHashed);
  }

  countClaimEvent(policy: IdempotencyPolicy, event: ClaimEvent): void {
    for (const observer of this.all) observer.countClaimEvent(policy, event);
  }

  claimAnswered(durationMs: number, answer: AcquireResult): void {
    for (const observer of this.all) observer.claimAnswered(durationMs, answer);
  }

  claimFailed(): void {
    for (const observer of this.all) observer.claimFailed();
  }
}
