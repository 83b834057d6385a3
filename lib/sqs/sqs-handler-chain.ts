import { IdempotencyInProgressError } from '../idempotency/idempotency.errors';
import { isSkipMessageException } from '../idempotency/skip-message.exception';
import type { SqsRecordStatus } from './sqs-record-result';

/** What one handler call did to a record. */
export interface SqsHandlerOutcome {
  status: Exclude<SqsRecordStatus, 'INVALID'>;
  error?: Error;
}

/**
 * The status of a handler call that raised `error`: a `SkipMessageException` acks the record, an
 * in-flight duplicate fails on purpose, anything else is a failure. Whatever was thrown ends up
 * in the record's log line as its `reason`, also a string, `undefined` or `null`.
 */
export function outcomeOfError(error: unknown): SqsHandlerOutcome {
  const status = isSkipMessageException(error)
    ? 'SKIPPED'
    : error instanceof IdempotencyInProgressError
      ? 'IN_PROGRESS'
      : 'FAILED';
  return { status, error: asError(error) };
}

/** `thrown` itself when it is an Error, else an Error saying what was thrown. */
function asError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  if (thrown !== null && typeof thrown === 'object' && typeof (thrown as Error).message === 'string') {
    return thrown as Error; // an Error of another realm, or an error-shaped object
  }
  return new Error(`the handler threw ${describeThrown(thrown)}, not an Error`, { cause: thrown });
}

function describeThrown(thrown: unknown): string {
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

/**
 * Runs the handlers of one record in order and folds their outcomes into the record's, for every
 * host (the dispatch core and the microservice transport):
 *
 * - the first failure stops the chain (a redelivery runs the rest; idempotent handlers that
 *   completed are skipped as duplicates then) and is the record's outcome;
 * - otherwise the record is `OK` when any handler ran, `SKIPPED` when none ran but one skipped,
 *   `DUPLICATE` when every handler met a completed key.
 *
 * `run` must not throw: it turns its handler's exception into an outcome (`outcomeOfError`).
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
  return { status, error: status === 'SKIPPED' ? skipped : undefined };
}
