import type { LogLevel } from '@nestjs/common';
import { IdempotencyInProgressError } from './idempotency.errors';
import type { IdempotencyOutcome } from './idempotency-state';
import { isSkipMessageException } from '../common/skip-message.exception';
import type { CounterName } from './idempotency-counters';

// Record outcomes, in one place: the statuses, how a handler's return or exception becomes one, how a
// record's handlers fold into one, and what each means downstream. Every host and reader derives them here.

/**
 * The fate of one record: `OK` handled; `SKIPPED` acked by a `SkipMessageException`; `DUPLICATE`
 * its key was completed, the handler did not run; `IN_PROGRESS` another attempt holds its key, it
 * fails and is redelivered; `FAILED` the handler, an enhancer or the store failed, or an earlier FIFO
 * record did; `INVALID` no body, not JSON, no route or invalid, and no key was claimed.
 */
export type SqsRecordStatus = 'OK' | 'SKIPPED' | 'DUPLICATE' | 'IN_PROGRESS' | 'FAILED' | 'INVALID';

/** Every status, in a fixed order (the Center's per-minute counters index them by it). */
export const RECORD_STATUSES = ['OK', 'SKIPPED', 'DUPLICATE', 'IN_PROGRESS', 'FAILED', 'INVALID'] as const;

/** What happened to one record. */
export interface SqsRecordResult {
  readonly messageId: string;
  readonly status: SqsRecordStatus;
  /** The routed event type, once known. */
  readonly eventType?: string;
  /** The resolved idempotency key, when an `@Idempotent()` handler ran. */
  readonly key?: string;
  /** Why it failed or was skipped. */
  readonly error?: Error;
  readonly durationMs: number;
  /** The trace of the record's span, while it records (docs/tracing.md). */
  readonly traceId?: string;
}

/** What one handler call did to a record (a handler never makes a record invalid). */
export interface SqsHandlerOutcome {
  status: Exclude<SqsRecordStatus, 'INVALID'>;
  error?: Error;
}

/** What each status means downstream. */
interface StatusMeaning {
  /** Left on the queue for redelivery (in Lambda's `batchItemFailures`; not acked by the poller). */
  readonly redelivered: boolean;
  readonly attention: boolean;
  readonly counter: CounterName;
  readonly logLevel: Extract<LogLevel, 'log' | 'warn' | 'error'>;
}

const MEANING: Readonly<Record<SqsRecordStatus, StatusMeaning>> = {
  OK: { redelivered: false, attention: false, counter: 'handled', logLevel: 'log' },
  SKIPPED: { redelivered: false, attention: false, counter: 'skipped', logLevel: 'log' },
  DUPLICATE: { redelivered: false, attention: false, counter: 'duplicates_completed', logLevel: 'log' },
  // Fails on purpose: the first attempt may still crash, and acking this copy would lose the message.
  IN_PROGRESS: { redelivered: true, attention: false, counter: 'duplicates_in_flight', logLevel: 'warn' },
  FAILED: { redelivered: true, attention: true, counter: 'failed', logLevel: 'error' },
  INVALID: { redelivered: true, attention: true, counter: 'invalid', logLevel: 'error' },
};

/** True for the statuses that leave the record on the queue for redelivery. */
export function isFailedStatus(status: SqsRecordStatus): boolean {
  return MEANING[status].redelivered;
}

/**
 * A failure an operator acts on (a `processing_error` event, the Center's failure list): not an
 * in-flight duplicate, redelivered routinely (reporting it would spend a receive towards the DLQ).
 */
export function needsAttention(status: SqsRecordStatus): boolean {
  return MEANING[status].attention;
}

/** The Idempotency Center counter a status moves. */
export function counterOfStatus(status: SqsRecordStatus): CounterName {
  return MEANING[status].counter;
}

/** The level of a record's log line: an in-flight duplicate (expected under redelivery) `warn`. */
export function logLevelOfStatus(status: SqsRecordStatus): StatusMeaning['logLevel'] {
  return MEANING[status].logLevel;
}

/** A call that returned: a duplicate when `@Idempotent()` found its key completed, else handled. */
export function outcomeOfReturn(idempotencyOutcome: IdempotencyOutcome | undefined): SqsHandlerOutcome {
  return idempotencyOutcome === 'DUPLICATE' ? DUPLICATE_OUTCOME : OK_OUTCOME;
}

const OK_OUTCOME: SqsHandlerOutcome = Object.freeze({ status: 'OK' });
const DUPLICATE_OUTCOME: SqsHandlerOutcome = Object.freeze({ status: 'DUPLICATE' });

/** A call that threw: a skip acks, an in-flight duplicate fails on purpose, anything else fails. */
export function outcomeOfError(error: unknown): SqsHandlerOutcome {
  const status = isSkipMessageException(error)
    ? 'SKIPPED'
    : error instanceof IdempotencyInProgressError
      ? 'IN_PROGRESS'
      : 'FAILED';
  return { status, error: asError(error) };
}

/**
 * Runs a record's handlers in order: the first failure stops the chain and is the record's outcome;
 * else `OK` when any ran, `SKIPPED` when one skipped, `DUPLICATE` when all met completed keys. `run`
 * must not throw.
 */
export async function runHandlerChain<H>(
  handlers: readonly H[],
  run: (handler: H, index: number) => Promise<SqsHandlerOutcome>,
): Promise<SqsHandlerOutcome> {
  let status: SqsHandlerOutcome['status'] = 'DUPLICATE';
  let skipped: Error | undefined;
  for (let i = 0; i < handlers.length; i++) {
    const outcome = await run(handlers[i], i);
    if (outcome.status === 'OK') status = 'OK';
    else if (outcome.status === 'SKIPPED') {
      if (status !== 'OK') status = 'SKIPPED';
      skipped = outcome.error;
    } else if (outcome.status !== 'DUPLICATE') return outcome;
  }
  if (status === 'SKIPPED') return { status, error: skipped };
  return status === 'OK' ? OK_OUTCOME : DUPLICATE_OUTCOME;
}

/** `thrown` itself when it is an Error, else an Error saying what was thrown. */
function asError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  if (thrown !== null && typeof thrown === 'object' && typeof (thrown as Error).message === 'string') {
    return thrown as Error; // an Error of another realm, or an error-shaped object
  }
  return new Error(`the handler threw ${describeThrown(thrown)}, not an Error`, { cause: thrown });
}

/** What was thrown, for a sentence: `undefined`, `the string "..."`, `number 42`, `the object {...}`. */
export function describeThrown(thrown: unknown): string {
  if (typeof thrown === 'string') return `the string ${JSON.stringify(thrown)}`;
  if (thrown === undefined || thrown === null) return String(thrown);
  if (typeof thrown === 'object') {
    try {
      return `the object ${JSON.stringify(thrown)?.slice(0, 200) ?? String(thrown)}`;
    } catch {
      return 'an object';
    }
  }
  return `${typeof thrown} ${String(thrown)}`;
}
