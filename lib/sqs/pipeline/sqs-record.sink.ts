import { HttpException, IntrinsicException, Logger } from '@nestjs/common';
import { isLogLevelEnabled, isNestLoggerSilenced } from '../../common/nest-internals';
import { hashKeyForDisplay } from '../../idempotency/idempotency-key';
import type { RecordObserver, RecordObservers } from '../../idempotency/record-observer';
import type { SqsRecordLogOptions } from '../sqs-module-options.interface';
import { logLevelOfStatus, SqsRecordResult, SqsRecordStatus } from '../../idempotency/record-outcome';

/** The fields of a record's log line (the `'json'` format logs this object). */
interface SqsRecordLogLine {
  status: SqsRecordStatus;
  eventType: string | null;
  key: string | null;
  messageId: string | null;
  queue: string;
  receiveCount: number;
  durationMs: number;
  /** The trace of the record's span, when it records (docs/tracing.md). */
  traceId?: string;
  reason?: string;
}

/**
 * One log line per record, at its end, at its status's level; nothing is built for a level that is
 * off. It is a record's only line, so a handler's own failure carries its stack (the library's errors
 * and `HttpException`s say all in their message). It also hands every record to the observer.
 */
export class SqsRecordSink {
  private readonly logger = new Logger('SqsRecord');
  private readonly enabled: boolean;
  private readonly json: boolean;
  private readonly hashKeys: boolean;

  constructor(
    options: SqsRecordLogOptions | false = {},
    /** Absent without `IdempotencyModule`, and for `SqsServer`'s own routes (`@Idempotent()` counts those). */
    private readonly observers?: RecordObservers,
  ) {
    this.enabled = options !== false;
    this.json = options !== false && options.format === 'json';
    this.hashKeys = options !== false && options.hashKeys === true;
  }

  /** What watches these records, if anything (installed during the bootstrap: read where used). */
  get observer(): RecordObserver | undefined {
    return this.observers?.current;
  }

  record(queue: string, result: SqsRecordResult, receiveCount: number): void {
    this.observer?.recordEnded(queue, result, receiveCount, this.hashKeys);
    const level = logLevelOfStatus(result.status);
    // Nothing is built for a line nobody prints (`logger: false` silences Nest's Logger altogether).
    if (!this.enabled || isNestLoggerSilenced() || !isLogLevelEnabled(level)) return;
    const key = result.key === undefined ? null : this.hashKeys ? hashKeyForDisplay(result.key) : result.key;
    const line: SqsRecordLogLine = {
      status: result.status,
      eventType: result.eventType ?? null,
      key,
      messageId: result.messageId || null,
      queue,
      receiveCount,
      durationMs: Math.round(result.durationMs * 10) / 10,
    };
    if (result.traceId !== undefined) line.traceId = result.traceId;
    if (result.error) line.reason = result.error.message;
    const message = this.json ? line : toText(line);
    const stack = result.status === 'FAILED' ? stackWorthShowing(result.error) : undefined;
    if (stack !== undefined) this.logger.error(message, stack);
    else if (level === 'error') this.logger.error(message);
    else if (level === 'warn') this.logger.warn(message);
    else this.logger.log(message);
  }

  /**
   * A record's handler ended after its timeout (`handleMessageTimeout`) had already failed the record:
   * how it ended, as a warning beside the record's one line, neither journaled nor counted.
   */
  endedAfterTimeout(queue: string, result: SqsRecordResult, timeoutMs: number): void {
    const type = result.eventType === undefined ? '' : ` (${result.eventType})`;
    const reason = result.error === undefined ? '' : ` (${JSON.stringify(result.error.message)})`;
    this.logger.warn(
      `Message ${result.messageId || '(no messageId)'} on queue "${queue}"${type}: its handler ended with status ` +
        `${result.status}${reason} after ${result.durationMs.toFixed(1)} ms, past handleMessageTimeout ` +
        `(${timeoutMs} ms), which had already failed the record and left it for redelivery; the record stays ` +
        'FAILED and is not counted again. Raise handleMessageTimeout if the handler needs longer.',
    );
  }
}

function toText(line: SqsRecordLogLine): string {
  let text =
    `status=${line.status} type=${line.eventType ?? '-'} key=${line.key ?? '-'} messageId=${line.messageId ?? '-'} ` +
    `queue=${line.queue} receiveCount=${line.receiveCount} durationMs=${line.durationMs.toFixed(1)}`;
  if (line.traceId !== undefined) text += ` traceId=${line.traceId}`;
  if (line.reason !== undefined) text += ` reason=${JSON.stringify(line.reason)}`;
  return text;
}

/** The stack of an error raised by application code; none for errors whose message says it all. */
function stackWorthShowing(error: Error | undefined): string | undefined {
  if (!(error instanceof Error) || error instanceof IntrinsicException || error instanceof HttpException) {
    return undefined;
  }
  return error.stack;
}
