import { SqsRecordTimeoutError } from '../sqs-message.errors';
import type { SqsRecordLike } from '../sqs-record.interface';
import type { SqsContext } from '../sqs-context';
import type { SqsRecordResult } from '../../idempotency/record-outcome';
import type { SqsRecordSink } from './sqs-record.sink';
import type { RecordSpan } from './record-tracing';
import { messageIdOf } from './sqs-batch.rules';

/**
 * The polling host's `handleMessageTimeout`: a record still running past it fails (left for redelivery),
 * its handler running on under its claim. Loaded by the pipeline with the first batch of a queue that
 * sets it; a Lambda or a queue without it never loads this.
 */

/** A record run under a timeout: where it is, for its timeout to fail it with, and whether it did. */
export class TimedRecord {
  readonly started = performance.now();
  context: SqsContext | undefined = undefined;
  sink: SqsRecordSink | undefined = undefined;
  /** The handler call under way (a further handler of a record has a context of its own). */
  handler: string | undefined = undefined;
  handlerContext: SqsContext | undefined = undefined;
  handlerStarted = 0;
  eventType: string | undefined = undefined;
  /** The record's span, when traced: the timeout ends it. */
  span: RecordSpan | undefined = undefined;
  /** Set once the timeout has failed the record: its end (and its handlers' ends) then count no more. */
  timedOut = false;

  constructor(readonly timeoutMs: number) {}
}

/**
 * `processRecord` under a timeout: a record still running after `timeoutMs` gets `timedOut`'s result
 * (the record itself runs on); the timer is cleared once either answers.
 */
export function withRecordTimeout(
  processRecord: (record: SqsRecordLike, index: number) => Promise<SqsRecordResult>,
  queue: string,
  timeoutMs: number,
  timedOut: (record: SqsRecordLike, error: SqsRecordTimeoutError, index: number) => SqsRecordResult,
): (record: SqsRecordLike, index: number) => Promise<SqsRecordResult> {
  return (record, index) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<SqsRecordResult>((resolve) => {
      timer = setTimeout(() => {
        const error = new SqsRecordTimeoutError(messageIdOf(record), queue, timeoutMs);
        resolve(timedOut(record, error, index));
      }, timeoutMs);
    });
    return Promise.race([processRecord(record, index), timeout]).finally(() => clearTimeout(timer));
  };
}

/**
 * The result of a record past its timeout: FAILED with what it reached so far (its event type, key, the
 * time it ran), its span ended, and the handler call it was in counted FAILED on `sink`. The caller logs it.
 */
export function timedOutResult(
  timed: TimedRecord,
  record: SqsRecordLike,
  error: Error,
  sink: SqsRecordSink,
): SqsRecordResult {
  timed.timedOut = true;
  const context = timed.context;
  const result: SqsRecordResult = {
    messageId: messageIdOf(record),
    status: 'FAILED',
    eventType: context?.eventType,
    key: context?.state.idempotencyKey,
    error,
    durationMs: performance.now() - timed.started,
    traceId: timed.span?.traceId,
  };
  timed.span?.end(result, context?.state.idempotencyOutcome);
  const { handler } = timed;
  if (handler !== undefined) {
    const outcome = timed.handlerContext?.state.idempotencyOutcome;
    sink.observer?.countCall(
      timed.eventType!,
      handler,
      'FAILED',
      outcome,
      performance.now() - timed.handlerStarted,
    );
  }
  return result;
}
