import type {
  BatchCallOutcome,
  BatchClaimDecision,
  BatchHandlerClaims,
  ClaimedBatch,
} from '../../idempotency/batch-handler.claims';
import type { IdempotencyPolicy } from '../../idempotency/idempotency-policy';
import {
  isFailedStatus,
  outcomeOfError,
  SqsHandlerOutcome,
  SqsRecordResult,
} from '../../idempotency/record-outcome';
import { SqsBatchContext, SqsBatchFailures } from '../sqs-batch-handler.context';
import { receiveCountOf, SqsContext } from '../sqs-context';
import { SqsRecordTimeoutError } from '../sqs-message.errors';
import type { SqsRecordLike } from '../sqs-record.interface';
import type { SqsRecordSink } from './sqs-record.sink';
import type { IdempotencyOutcome } from '../../idempotency/idempotency-state';
import { checkRecordShape } from './sqs-record.shape';

/**
 * The batches of a queue where `@SqsBatchHandler()`s take some event types (loaded with the first such
 * batch; queues without one never load it). Every record is routed first; the records of each batch
 * route go to its handler in one call, in the order they came; the others run through the record
 * pipeline as usual, side by side with the call. Batch handlers are refused on FIFO queues at start-up
 * (`resolveQueue`), so no group order is kept here.
 *
 * Per event, as for single records: under `@Idempotent()` each key is claimed (all in one turn,
 * `batch-handler.claims.ts`), duplicates and in-flight copies never reach the handler, and each event is
 * settled, logged and counted once with its own status. The handler names the events that failed by
 * returning `SqsBatchFailures`; any other throw fails (and releases) every event it was given, a
 * `SkipMessageException` acks them all. `handleMessageTimeout` applies to the call: past it, the call's
 * events fail (their claims held until it ends, as a single record's are).
 */

/** A batch handler, as the runner calls it. */
export interface SqsBatchCall {
  /** Calls the handler through Nest's pipeline with the events; resolves to what it returned. */
  invoke(events: object[], batch: SqsBatchContext): Promise<unknown>;
  /** Its `@Idempotent()` policy and the claims to make under it; `undefined` when it has none. */
  idempotency(): Promise<SqsBatchIdempotency | undefined>;
}

/** What claims a batch handler's events (`IdempotencyService.batchHandlerClaims()`) and under which policy. */
export interface SqsBatchIdempotency {
  readonly policy: IdempotencyPolicy;
  readonly claims: BatchHandlerClaims;
}

/** What the runner reads of a routed record (the pipeline's `SqsRoutedRecord`, which it does not import). */
type RoutedRecord =
  | {
      readonly kind: 'handlers';
      readonly event: object;
      readonly eventType: string;
      readonly handlers: ReadonlyArray<{ readonly name: string; readonly batch?: SqsBatchCall }>;
      readonly sink?: SqsRecordSink;
    }
  | { readonly kind: 'skip' | 'invalid'; readonly sink?: SqsRecordSink };

/** A record routed ahead of running it (the pipeline's `SqsPreparedRecord`). */
interface PreparedRecord {
  readonly started: number;
  readonly context: SqsContext;
  readonly routed: RoutedRecord;
}

/** Where the batch comes from (the pipeline's `SqsBatchSource`). */
interface BatchSource {
  readonly queue: string;
  readonly queueUrl?: string;
  readonly raw?: readonly unknown[];
  readonly remainingTimeMs?: () => number;
  readonly recordTimeoutMs?: number;
}

/** What the runner needs of the record pipeline. */
export interface BatchRunnerHooks<Source extends BatchSource, Prepared extends PreparedRecord> {
  /** Where records are logged and counted when their route names no sink of its own. */
  readonly sink: SqsRecordSink;
  /** The records' spans, where the app is traced (`record-tracing.ts`). */
  readonly tracing?: BatchRecordTracing;
  /** Runs records of no batch route through the pipeline, already routed. */
  runRest(records: SqsRecordLike[], source: Source, prepared: Prepared[]): Promise<SqsRecordResult[]>;
}

/**
 * The records' spans as the runner uses them: `record-tracing.ts`'s `RecordTracing`, spelled out here so
 * that the package's type declarations never reach `@opentelemetry/api`, an optional peer.
 */
export interface BatchRecordTracing {
  start(record: SqsRecordLike, queue: string, queueUrl: string | undefined): BatchRecordSpan;
}

/** A record's span as the runner uses it (`record-tracing.ts`'s `RecordSpan`). */
export interface BatchRecordSpan {
  readonly traceId: string | undefined;
  handlerCalled(name: string): void;
  end(result: SqsRecordResult, outcome: IdempotencyOutcome | undefined): void;
}

/** A queue as the runner routes its records (the pipeline's `SqsPipelineQueue`). */
interface RoutingQueue<Routed> {
  readonly name: string;
  route(record: SqsRecordLike, context: SqsContext): Promise<Routed>;
}

/**
 * A record's context and route, ahead of running it: the pipeline's `runRecord` does the same inline,
 * where the record is then run at once.
 */
async function prepareRecord<Routed extends RoutedRecord>(
  record: SqsRecordLike,
  queue: RoutingQueue<Routed>,
  raw: unknown,
  remainingTimeMs: (() => number) | undefined,
): Promise<{ started: number; context: SqsContext; routed: Routed | { kind: 'invalid'; error: Error } }> {
  const started = performance.now();
  const context = new SqsContext(record, queue.name, raw, remainingTimeMs);
  try {
    checkRecordShape(record, typeof record?.messageId === 'string' ? record.messageId : '', queue.name);
    return { started, context, routed: await queue.route(record, context) };
  } catch (error) {
    return { started, context, routed: { kind: 'invalid', error: error as Error } };
  }
}

/** Runs a batch of a queue with batch routes; the results come back in input order. */
export async function runWithBatchHandlers<
  Routed extends RoutedRecord,
  Source extends BatchSource,
  Prepared extends PreparedRecord,
>(
  records: readonly SqsRecordLike[],
  queue: RoutingQueue<Routed>,
  source: Source,
  hooks: BatchRunnerHooks<Source, Prepared>,
): Promise<SqsRecordResult[]> {
  // Built here as the pipeline builds them, so they are its `SqsPreparedRecord`s.
  const prepared = (await Promise.all(
    records.map((record, i) =>
      prepareRecord(record, queue, source.raw?.[i] ?? record, source.remainingTimeMs),
    ),
  )) as unknown as Prepared[];
  const calls = new Map<SqsBatchCall, number[]>();
  const rest: number[] = [];
  prepared.forEach(({ routed }, i) => {
    const call = routed.kind === 'handlers' ? routed.handlers[0]?.batch : undefined;
    if (call === undefined) rest.push(i);
    else if (calls.has(call)) calls.get(call)!.push(i);
    else calls.set(call, [i]);
  });
  const results = new Array<SqsRecordResult>(records.length);
  const place = (indices: readonly number[]) => (done: SqsRecordResult[]) =>
    done.forEach((result, j) => (results[indices[j]] = result));
  const running: Array<Promise<void>> = [];
  if (rest.length > 0) {
    const raw = source.raw && rest.map((i) => source.raw![i]);
    const restSource = { ...source, raw };
    running.push(
      hooks
        .runRest(
          rest.map((i) => records[i]),
          restSource,
          rest.map((i) => prepared[i]),
        )
        .then(place(rest)),
    );
  }
  for (const [call, indices] of calls) {
    const entries = indices.map((i) => ({ record: records[i], ...prepared[i] }));
    running.push(
      new BatchCallRun(call, entries, source, hooks.sink, hooks.tracing).run().then(place(indices)),
    );
  }
  await Promise.all(running);
  return results;
}

interface Entry extends PreparedRecord {
  readonly record: SqsRecordLike;
}

/** One call of a batch handler: its events' claims, the call, its results, each record's end. */
class BatchCallRun {
  private readonly routed: Extract<RoutedRecord, { kind: 'handlers' }>;
  private readonly sink: SqsRecordSink;
  private readonly handlerName: string;
  private readonly outcomes: Array<SqsHandlerOutcome | undefined>;
  /**
   * Each record's span where traced: a span per record, as on the per-record path, ended with its status.
   * The call itself runs in the ambient context (it serves many records, so no one record's span is its parent).
   */
  private readonly spans: BatchRecordSpan[] | undefined;

  constructor(
    private readonly call: SqsBatchCall,
    private readonly entries: readonly Entry[],
    private readonly source: BatchSource,
    sink: SqsRecordSink,
    tracing: BatchRecordTracing | undefined,
  ) {
    this.spans = tracing && entries.map(({ record }) => tracing.start(record, source.queue, source.queueUrl));
    this.routed = entries[0].routed as Extract<RoutedRecord, { kind: 'handlers' }>;
    this.sink = this.routed.sink ?? sink;
    this.handlerName = this.routed.handlers[0].name;
    this.outcomes = new Array<SqsHandlerOutcome | undefined>(entries.length);
  }

  async run(): Promise<SqsRecordResult[]> {
    const { entries } = this;
    let idempotency: SqsBatchIdempotency | undefined;
    let claimed: ClaimedBatch | undefined;
    try {
      idempotency = await this.call.idempotency();
      if (idempotency !== undefined && !idempotency.policy.transactional) {
        claimed = await idempotency.claims.claim(idempotency.policy, this.claimEntries());
      }
    } catch (error) {
      // Nothing claimed (the claims never reject): every event fails and comes back.
      const outcome = outcomeOfError(error);
      return this.finishAll(entries.map(() => outcome));
    }
    if (idempotency?.policy.transactional) return this.runTransactional(idempotency);
    const decisions: readonly BatchClaimDecision[] =
      claimed?.decisions ?? entries.map(() => ({ run: true }) as const);
    const running: number[] = [];
    decisions.forEach((decision, i) => {
      if (decision.run) running.push(i);
      else if ('outcome' in decision) this.outcomes[i] = decision.outcome;
    });
    if (running.length > 0) {
      if (claimed !== undefined) idempotency!.claims.startHeartbeats(claimed);
      const settled = this.callHandler(running).then(async ({ outcomes }) => {
        if (claimed !== undefined) {
          const completed = claimed.acquired.map((_, i) => {
            const j = running.indexOf(i);
            return j >= 0 && !isFailedStatus(outcomes[j].status);
          });
          await idempotency!.claims.settle(claimed, completed);
        }
        return outcomes;
      });
      const timeoutMs = this.source.recordTimeoutMs;
      const outcomes =
        timeoutMs !== undefined && timeoutMs > 0
          ? await this.withTimeout(settled, running, timeoutMs)
          : await settled;
      running.forEach((i, j) => (this.outcomes[i] = outcomes[j]));
    }
    decisions.forEach((decision, i) => {
      if (!decision.run && 'copyOf' in decision) this.outcomes[i] = this.copyOutcome(i, decision.copyOf);
    });
    return this.finishAll(this.outcomes as SqsHandlerOutcome[]);
  }

  /** The handler's outcome for each event it is given (`running`), and what it threw; never rejects. */
  private async callHandler(running: readonly number[], transaction?: unknown): Promise<BatchCallOutcome> {
    const events = running.map((i) => (this.entries[i].routed as { event: object }).event);
    const contexts = running.map((i) => this.entries[i].context);
    const batch = new SqsBatchContext(this.source.queue, this.routed.eventType, contexts, events);
    if (this.spans !== undefined) for (const i of running) this.spans[i].handlerCalled(this.handlerName);
    batch.transaction = transaction;
    try {
      const returned = await this.call.invoke(events, batch);
      return { outcomes: outcomesOfReturn(returned, events, this.handlerName) };
    } catch (error) {
      const outcome = outcomeOfError(error);
      return { outcomes: events.map(() => outcome), thrown: { error } };
    } finally {
      batch.transaction = undefined; // committed or rolled back next: of no use after the call
    }
  }

  /**
   * A transactional batch handler's call: the claims, the call and the completions in the store's one
   * transaction (`BatchHandlerClaims.runTransactional`). `handleMessageTimeout` fails every record of the
   * call past it; the transaction ends with the call (the server ends one left idle past the lease).
   */
  private async runTransactional(idempotency: SqsBatchIdempotency): Promise<SqsRecordResult[]> {
    const running = idempotency.claims.runTransactional(
      idempotency.policy,
      this.claimEntries(),
      (indices, transaction) => this.callHandler(indices, transaction),
    );
    const settle = ({ batch, outcomes }: Awaited<typeof running>): SqsHandlerOutcome[] => {
      batch.decisions.forEach((decision, i) => {
        if (decision.run) this.outcomes[i] = outcomes.get(i)!;
        else if ('outcome' in decision) this.outcomes[i] = decision.outcome;
      });
      batch.decisions.forEach((decision, i) => {
        if (!decision.run && 'copyOf' in decision) this.outcomes[i] = this.copyOutcome(i, decision.copyOf);
      });
      return this.outcomes as SqsHandlerOutcome[];
    };
    const timeoutMs = this.source.recordTimeoutMs;
    if (timeoutMs === undefined || timeoutMs <= 0) return this.finishAll(settle(await running));
    const all = this.entries.map((_, i) => i);
    const outcomes = await this.withTimeout(running.then(settle), all, timeoutMs);
    return this.finishAll(outcomes);
  }

  private claimEntries() {
    return this.entries.map(({ routed, context }) => ({
      payload: (routed as { event: object }).event,
      hostContext: context,
      state: context.state,
    }));
  }

  /**
   * The call's outcomes, or past `timeoutMs` a timeout for each of its events: they fail now, and when
   * the call ends (its claims settled by then) each is only warned about, as a single record is.
   */
  private async withTimeout(
    settled: Promise<readonly SqsHandlerOutcome[]>,
    running: readonly number[],
    timeoutMs: number,
  ): Promise<readonly SqsHandlerOutcome[]> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), timeoutMs);
    });
    const outcomes = await Promise.race([settled, timedOut]);
    clearTimeout(timer);
    if (outcomes !== undefined) return outcomes;
    void settled.then((late) =>
      running.forEach((i, j) => {
        const result = this.resultOf(i, late[j]);
        this.sink.endedAfterTimeout(this.source.queue, result, timeoutMs);
      }),
    );
    return running.map((i) => ({
      status: 'FAILED',
      error: new SqsRecordTimeoutError(this.entries[i].context.messageId, this.source.queue, timeoutMs),
    }));
  }

  /** A copy of an earlier event of the batch (one key): acked as a duplicate when it succeeded, else failed alike. */
  private copyOutcome(i: number, first: number): SqsHandlerOutcome {
    const outcome = this.outcomes[first]!;
    const state = this.entries[i].context.state;
    if (!isFailedStatus(outcome.status)) {
      state.idempotencyOutcome = 'DUPLICATE';
      return { status: 'DUPLICATE' };
    }
    state.idempotencyOutcome = this.entries[first].context.state.idempotencyOutcome;
    return outcome;
  }

  /** Each record's end: counted under the handler, logged and journaled once. */
  private finishAll(outcomes: readonly SqsHandlerOutcome[]): SqsRecordResult[] {
    const observer = this.sink.observer;
    return this.entries.map((entry, i) => {
      const result = this.resultOf(i, outcomes[i]);
      const { idempotencyOutcome } = entry.context.state;
      observer?.countCall(
        this.routed.eventType,
        this.handlerName,
        result.status,
        idempotencyOutcome,
        result.durationMs,
      );
      this.spans?.[i].end(result, idempotencyOutcome);
      this.sink.record(this.source.queue, result, receiveCountOf(entry.record));
      return result;
    });
  }

  private resultOf(i: number, outcome: SqsHandlerOutcome): SqsRecordResult {
    const { context, started } = this.entries[i];
    return {
      messageId: context.messageId,
      status: outcome.status,
      eventType: context.eventType,
      key: context.state.idempotencyKey,
      error: outcome.error,
      durationMs: performance.now() - started,
      traceId: this.spans?.[i].traceId,
    };
  }
}

const OK: SqsHandlerOutcome = Object.freeze({ status: 'OK' });

/**
 * What a batch handler's return means for each of its events: `SqsBatchFailures` names those that failed
 * (a `SkipMessageException` cause acks its event as skipped); anything else, all succeeded. Naming an
 * object it was not given is a handler bug that fails the whole call (nothing is acked on a guess).
 */
function outcomesOfReturn(
  returned: unknown,
  events: readonly object[],
  handler: string,
): SqsHandlerOutcome[] {
  const outcomes = events.map(() => OK);
  if (!(returned instanceof SqsBatchFailures)) return outcomes;
  const positions = new Map(events.map((event, i) => [event, i]));
  for (const [event, cause] of returned.entries()) {
    const i = positions.get(event);
    if (i === undefined) {
      const error = new Error(
        `${handler} returned SqsBatchFailures naming an object that is not one of the events it was given; ` +
          'every event of the call fails and is redelivered. Name the event objects the handler received.',
      );
      return events.map(() => ({ status: 'FAILED', error }));
    }
    outcomes[i] = outcomeOfError(cause);
  }
  return outcomes;
}
