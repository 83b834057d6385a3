import { ARRIVED_PAYLOAD } from '../../idempotency/idempotency.constants';
import { NO_HANDLER, UNKNOWN_EVENT_TYPE } from '../../idempotency/record-observer';
import type { RecordObserver, RecordObservers } from '../../idempotency/record-observer';
import { SqsConfigurationError } from '../../common/sqs-idempotency.error';
import type { SqsBatchCall } from './sqs-batch-handler.runner';
import { messageIdOf, processSqsBatch } from './sqs-batch.rules';
import type { SqsBatchRules } from './sqs-batch.rules';
import { receiveCountOf, SqsContext } from '../sqs-context';
import { InvalidSqsMessageError } from '../sqs-message.errors';
import { checkRecordShape } from './sqs-record.shape';
import type {
  ResolvedSqsDispatchOptions,
  SqsDispatchOptions,
  SqsTracingOptions,
} from '../sqs-module-options.interface';
import type { SqsRecordLike } from '../sqs-record.interface';
import type { SqsRecordSink } from './sqs-record.sink';
import type { RecordSpan, RecordTracing } from './record-tracing';
import type { TimedRecord } from './sqs-record.timeout';
import {
  describeThrown,
  outcomeOfError,
  outcomeOfReturn,
  runHandlerChain,
  SqsHandlerOutcome,
  SqsRecordResult,
  SqsRecordStatus,
} from '../../idempotency/record-outcome';

/**
 * The one record pipeline, for every host: batch rules → shape check → route (decode, route,
 * validate) → each handler (where `@Idempotent()` claims) → outcome → count, log. Never throws for a
 * record: every outcome becomes an `SqsRecordResult`.
 */

/** One handler of a route, as the pipeline calls it. */
export interface SqsRouteHandler {
  /** `Class.method`, for the counters. */
  readonly name: string;
  /** Calls the handler through Nest's pipeline; resolves once it has ended, rejects with its failure. */
  invoke(event: object, context: SqsContext): Promise<unknown>;
  /**
   * Set for an `@SqsBatchHandler()`: its route's records are handed to it together
   * (`sqs-batch-handler.runner.ts`), never one by one through `invoke`.
   */
  readonly batch?: SqsBatchCall;
}

/** A record already routed (by the batch runner): its start, its context and its route. */
export interface SqsPreparedRecord {
  readonly started: number;
  readonly context: SqsContext;
  readonly routed: SqsRoutedRecord;
}

/** A record, decoded and routed: the handlers and their event, or why none is called; `sink`: `SqsRoute.sink`. */
export type SqsRoutedRecord = (
  | {
      readonly kind: 'handlers';
      readonly event: object;
      /** The route's event type, under which its handlers' calls are counted. */
      readonly eventType: string;
      readonly handlers: readonly SqsRouteHandler[];
    }
  /** Nothing to handle (an `s3:TestEvent`): acked on purpose, no handler, no key. */
  | { readonly kind: 'skip'; readonly reason: string }
  /** Not decodable or not routable: no key is claimed. */
  | { readonly kind: 'invalid'; readonly error: Error }
) & { readonly sink?: SqsRecordSink };

/** A queue as the pipeline runs it. */
export interface SqsPipelineQueue {
  readonly name: string;
  readonly fifo: boolean;
  readonly options: Pick<ResolvedSqsDispatchOptions, 'fifoFailureMode' | 'concurrency'>;
  /** Whether an `@SqsBatchHandler()` takes some of its event types: its batches go through the batch runner. */
  readonly batchHandlers?: boolean;
  /** Decodes and routes a record; sets `context.eventType` once known. May throw: the record is invalid. */
  route(record: SqsRecordLike, context: SqsContext): Promise<SqsRoutedRecord>;
}

/** Where a batch comes from, as the host knows it. */
export interface SqsBatchSource {
  /** Queue name: the configured name, or the name in the Lambda record's ARN. */
  queue: string;
  /** Dispatch options of the host that override the module's (the Lambda handler's options). */
  overrides?: SqsDispatchOptions;
  /** Time the host has left for this batch (Lambda); sizes idempotency leases. */
  remainingTimeMs?: () => number;
  /** The host's own message objects, index for index (`ctx.raw`). Default: the records. */
  raw?: readonly unknown[];
  /** Milliseconds after which a record still running fails (the polling host's `handleMessageTimeout`). */
  recordTimeoutMs?: number;
  /** The queue's URL, where the host knows it (the polling hosts): on the records' spans. */
  queueUrl?: string;
}

/** What the polling consumer needs of a host: a batch in, results out (`SqsQueueRegistry`, `SqsServer`). */
export interface SqsBatchDispatcher {
  dispatchBatch(records: readonly SqsRecordLike[], source: SqsBatchSource): Promise<SqsRecordResult[]>;
}

export class SqsRecordPipeline {
  /**
   * The span of each record, set by the host at start-up where an OpenTelemetry SDK is registered
   * (`loadRecordTracing()`); `undefined` otherwise, and the records run as if tracing did not exist.
   */
  private tracing: RecordTracing | undefined = undefined;

  /** `sink`: where finished records go: their log line, which hands them to the observer (counters, journal). */
  constructor(private readonly sink: SqsRecordSink) {}

  /**
   * Turns the records' spans on where `@opentelemetry/api` is installed and an SDK has registered a
   * tracer provider (else nothing of tracing is loaded); `observers`: the claims' span events join them.
   * Hosts call it once, at start-up.
   */
  async startTracing(
    options: SqsTracingOptions | false | undefined,
    where: string,
    observers?: RecordObservers,
  ): Promise<void> {
    if (options === false || this.tracing !== undefined) return;
    const parent = options?.parent;
    if (parent !== undefined && parent !== 'ambient' && parent !== 'producer') {
      throw new SqsConfigurationError(
        `${where}: tracing.parent must be 'ambient' (the span current when a record runs) or 'producer' ` +
          `(the context the message was sent in), got ${JSON.stringify(parent)}.`,
      );
    }
    // The check loads here, not with the pipeline: an app with `tracing: false` never reads it.
    const { registeredTracerApi } = await import('../../common/tracer-provider.check');
    const api = await registeredTracerApi();
    if (api === undefined) return;
    const { RecordTracing } = await import('./record-tracing');
    this.tracing = new RecordTracing(api, options);
    if (observers !== undefined) {
      observers.add(this.tracing.claimObserver);
      observers.batchCalls = this.tracing.batchCalls;
    }
  }

  /**
   * Runs a batch of one queue under the batch rules; the results come back in input order. `prepared`:
   * the records' routes, when the batch runner has routed them already (index for index).
   */
  run(
    records: readonly SqsRecordLike[],
    queue: SqsPipelineQueue,
    source: SqsBatchSource,
    prepared?: readonly SqsPreparedRecord[],
  ): Promise<SqsRecordResult[]> {
    if (queue.batchHandlers === true && prepared === undefined) {
      return this.runWithBatchHandlers(records, queue, source);
    }
    const { recordTimeoutMs } = source;
    if (recordTimeoutMs !== undefined && recordTimeoutMs > 0) {
      return this.runUnderTimeout(records, queue, source, prepared, recordTimeoutMs);
    }
    return processSqsBatch(
      records,
      rulesOf(queue),
      (record, index) => this.startRecord(record, index, queue, source, prepared?.[index], undefined),
      (record, error, status) => this.reject(record, queue.name, error, status, source.queueUrl),
    );
  }

  /**
   * A batch of a polling queue with `handleMessageTimeout`: each record past it fails, logged and counted
   * once, under the handler it was in; its handler runs on under its claim, and its end is only warned
   * about (`sqs-record.timeout.ts`, loaded here).
   */
  private async runUnderTimeout(
    records: readonly SqsRecordLike[],
    queue: SqsPipelineQueue,
    source: SqsBatchSource,
    prepared: readonly SqsPreparedRecord[] | undefined,
    timeoutMs: number,
  ): Promise<SqsRecordResult[]> {
    const { TimedRecord, timedOutResult, withRecordTimeout } = await import('./sqs-record.timeout');
    const timed = new Array<TimedRecord>(records.length);
    const processRecord = (record: SqsRecordLike, index: number) => {
      const running = (timed[index] = new TimedRecord(timeoutMs));
      return this.startRecord(record, index, queue, source, prepared?.[index], running);
    };
    const timedOut = (record: SqsRecordLike, error: Error, index: number) => {
      const running = timed[index];
      const sink = running.sink ?? this.sink;
      const result = timedOutResult(running, record, error, sink);
      return this.finish(sink, queue.name, result, receiveCountOf(record), running.handler !== undefined);
    };
    return processSqsBatch(
      records,
      rulesOf(queue),
      withRecordTimeout(processRecord, queue.name, timeoutMs, timedOut),
      (record, error, status) => this.reject(record, queue.name, error, status, source.queueUrl),
    );
  }

  /** A record's run, under its span when traced (current from its decoding to its end, for Nest's enhancers and the handler). */
  private startRecord(
    record: SqsRecordLike,
    index: number,
    queue: SqsPipelineQueue,
    source: SqsBatchSource,
    prepared: SqsPreparedRecord | undefined,
    timed: TimedRecord | undefined,
  ): Promise<SqsRecordResult> {
    const raw = source.raw?.[index] ?? record;
    const tracing = this.tracing;
    if (tracing === undefined) {
      return this.runRecord(record, queue, raw, source.remainingTimeMs, timed, prepared, undefined);
    }
    const span = tracing.start(record, queue.name, source.queueUrl);
    if (timed !== undefined) timed.span = span;
    return span.run(() => this.runRecord(record, queue, raw, source.remainingTimeMs, timed, prepared, span));
  }

  /**
   * `timed`: the record runs under a timeout, which may fail it first; then its end is only warned about.
   * `span`: the record's span, when traced.
   */
  private async runRecord(
    record: SqsRecordLike,
    queue: SqsPipelineQueue,
    raw: unknown,
    remainingTimeMs: (() => number) | undefined,
    timed: TimedRecord | undefined,
    prepared: SqsPreparedRecord | undefined,
    span: RecordSpan | undefined,
  ): Promise<SqsRecordResult> {
    const messageId = messageIdOf(record);
    let started: number;
    let context: SqsContext;
    let routed: SqsRoutedRecord;
    if (prepared === undefined) {
      started = performance.now();
      context = new SqsContext(record, queue.name, raw, remainingTimeMs);
      if (timed !== undefined) timed.context = context;
      try {
        checkRecordShape(record, messageId, queue.name);
        routed = await queue.route(record, context);
      } catch (error) {
        routed = { kind: 'invalid', error: error as Error };
      }
    } else {
      ({ started, context, routed } = prepared);
      if (timed !== undefined) timed.context = context;
    }
    const sink = routed.sink ?? this.sink;
    if (timed !== undefined) timed.sink = sink;
    let status: SqsRecordStatus;
    let error: Error | undefined;
    if (routed.kind === 'handlers') {
      ({ status, error } = await this.runHandlers(
        routed,
        context,
        remainingTimeMs,
        sink.observer,
        timed,
        span,
      ));
    } else if (routed.kind === 'skip') {
      status = 'SKIPPED';
      error = new SkippedEnvelopeNotice(routed.reason);
    } else {
      status = 'INVALID';
      error =
        routed.error instanceof InvalidSqsMessageError
          ? routed.error
          : new InvalidSqsMessageError(messageId, queue.name, invalidReason(routed.error));
    }
    const result: SqsRecordResult = {
      messageId,
      status,
      eventType: context.eventType,
      key: context.state.idempotencyKey,
      error,
      durationMs: performance.now() - started,
      traceId: span?.traceId,
    };
    span?.end(result, context.state.idempotencyOutcome);
    if (timed?.timedOut) {
      sink.endedAfterTimeout(queue.name, result, timed.timeoutMs);
      return result; // the timeout answered for the record: nothing reads this
    }
    return this.finish(sink, queue.name, result, receiveCountOf(record), routed.kind === 'handlers');
  }

  /**
   * A batch of a queue where `@SqsBatchHandler()`s take some types: every record routed first, each batch
   * route's records handed to its handler at once, the rest run here as usual (`sqs-batch-handler.runner.ts`,
   * loaded with the first such batch).
   */
  private async runWithBatchHandlers(
    records: readonly SqsRecordLike[],
    queue: SqsPipelineQueue,
    source: SqsBatchSource,
  ): Promise<SqsRecordResult[]> {
    const { runWithBatchHandlers } = await import('./sqs-batch-handler.runner');
    return runWithBatchHandlers<SqsRoutedRecord, SqsBatchSource, SqsPreparedRecord>(records, queue, source, {
      sink: this.sink,
      tracing: this.tracing,
      runRest: (rest, restSource, prepared) => this.run(rest, queue, restSource, prepared),
    });
  }

  /**
   * Calls the handlers in order, each with a context of its own (its own claim), the first failure
   * stopping the chain. One handler's promise is returned as it is, not wrapped in another.
   */
  private runHandlers(
    routed: Extract<SqsRoutedRecord, { kind: 'handlers' }>,
    context: SqsContext,
    remainingTimeMs: (() => number) | undefined,
    observer: RecordObserver | undefined,
    timed: TimedRecord | undefined,
    span: RecordSpan | undefined,
  ): Promise<SqsHandlerOutcome> {
    const { handlers, event, eventType } = routed;
    if (handlers.length === 1) {
      return runHandler(handlers[0], event, context, eventType, observer, timed, span);
    }
    return runHandlerChain(handlers, (handler, i) =>
      runHandler(
        handler,
        event,
        i === 0 ? context : fork(context, remainingTimeMs),
        eventType,
        observer,
        timed,
        span,
      ),
    );
  }

  /**
   * Where every record ends: counted under `'-'` when no handler ran (each handler call is counted
   * as it ends), then logged.
   */
  private finish(
    sink: SqsRecordSink,
    queue: string,
    result: SqsRecordResult,
    receiveCount: number,
    handled: boolean,
  ): SqsRecordResult {
    if (!handled) {
      const eventType = result.eventType ?? UNKNOWN_EVENT_TYPE;
      sink.observer?.countCall(eventType, NO_HANDLER, result.status, undefined, result.durationMs);
    }
    sink.record(queue, result, receiveCount);
    return result;
  }

  /** A record the batch rules fail unrun (behind a FIFO failure, or without a group): logged and counted. */
  private reject(
    record: SqsRecordLike,
    queue: string,
    error: Error,
    status: SqsRecordStatus,
    queueUrl: string | undefined,
  ): SqsRecordResult {
    // Its span opens and ends at once: every record has one, the unrun ones too.
    const span = this.tracing?.start(record, queue, queueUrl);
    const result: SqsRecordResult = {
      messageId: messageIdOf(record),
      status,
      error,
      durationMs: 0,
      traceId: span?.traceId,
    };
    span?.end(result, undefined);
    return this.finish(this.sink, queue, result, receiveCountOf(record), false);
  }
}

/** Why a record was acked without a handler (S3's `s3:TestEvent`): the `reason` of its `SKIPPED` line. */
export class SkippedEnvelopeNotice extends Error {
  readonly code: string = 'SQS_ENVELOPE_SKIPPED';

  constructor(readonly reason: string) {
    super(reason);
    this.name = 'SkippedEnvelopeNotice';
  }
}

/** Why a record is invalid, whatever its decoding threw (even `undefined`). */
function invalidReason(thrown: unknown): string {
  if (thrown instanceof Error) return thrown.message;
  if (thrown !== null && typeof thrown === 'object' && typeof (thrown as Error).message === 'string') {
    return (thrown as Error).message; // an Error of another realm, or an error-shaped object
  }
  return `decoding it threw ${describeThrown(thrown)}, not an Error`;
}

/**
 * One handler call: its outcome (never a rejection), counted under its handler, and timed, when calls
 * are counted; under a timeout, `timed` knows the call, and a call that ends after it is not counted.
 */
async function runHandler(
  handler: SqsRouteHandler,
  event: object,
  context: SqsContext,
  eventType: string,
  observer: RecordObserver | undefined,
  timed: TimedRecord | undefined,
  span: RecordSpan | undefined,
): Promise<SqsHandlerOutcome> {
  span?.handlerCalled(handler.name);
  const started = observer === undefined && timed === undefined ? 0 : performance.now();
  if (timed !== undefined) {
    timed.handler = handler.name;
    timed.handlerContext = context;
    timed.handlerStarted = started;
    timed.eventType = eventType;
  }
  let outcome: SqsHandlerOutcome;
  try {
    await handler.invoke(event, context);
    outcome = outcomeOfReturn(context.state.idempotencyOutcome);
  } catch (error) {
    outcome = outcomeOfError(error);
  }
  if (timed?.timedOut) return outcome; // counted as FAILED when it timed out
  const { idempotencyOutcome } = context.state;
  observer?.countCall(
    eventType,
    handler.name,
    outcome.status,
    idempotencyOutcome,
    performance.now() - started,
  );
  return outcome;
}

/** A context of its own for each further handler of a record, so each makes its own claim. */
function fork(context: SqsContext, remainingTimeMs: (() => number) | undefined): SqsContext {
  const copy = new SqsContext(context.record, context.queue, context.raw, remainingTimeMs);
  copy.eventType = context.eventType;
  copy.envelopes = context.envelopes;
  copy.envelopeKey = context.envelopeKey;
  copy[ARRIVED_PAYLOAD] = context[ARRIVED_PAYLOAD];
  return copy;
}

/** The batch rules of a queue, as its options set them. */
function rulesOf(queue: SqsPipelineQueue): SqsBatchRules {
  const { fifoFailureMode, concurrency } = queue.options;
  return { queue: queue.name, fifo: queue.fifo, fifoFailureMode, concurrency };
}
