import { Inject, Injectable, Logger, OnModuleInit, Optional } from '@nestjs/common';
import { SQS_MODULE_OPTIONS } from '../constants';
import { IdempotencyStats, NO_HANDLER, UNKNOWN_EVENT_TYPE } from '../observability/idempotency-stats.service';
import { processSqsBatch } from './sqs-batch.processor';
import { SqsDecodedRecord, SqsMessageDecoding, SqsOpenedMessage } from './decoding/sqs-message-decoding';
import { SqsContext } from './sqs-context';
import { SqsFallback } from './sqs-fallback.decorator';
import { outcomeOfError, runHandlerChain, SqsHandlerOutcome } from './sqs-handler-chain';
import { SqsHandlerExplorer } from './sqs-handler.explorer';
import { toEvent } from './sqs-message.decoder';
import { InvalidSqsMessageError } from './sqs-message.errors';
import type { SqsDispatchOptions, SqsModuleOptions, SqsQueueOptions } from './sqs-module-options.interface';
import { resolveDispatchOptions, ResolvedQueue } from './sqs-queue.resolver';
import type { SqsRecordLike } from './sqs-record.interface';
import { SqsRecordResult, SqsRecordStatus } from './sqs-record-result';
import { SqsRecordLogger } from './sqs-record.logger';
import { SqsQueueRouter, SqsRoute } from './sqs-router';
import { unvalidatedEventClasses } from './unvalidated-event-classes';

/** A queue name no handler binds to: its router holds the handlers that listen on every queue. */
const UNBOUND_QUEUE = '\u0000unbound';

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
}

/** Where one record comes from (`dispatchRecord`): a batch source, with the record's own raw message. */
export interface SqsRecordSource extends Omit<SqsBatchSource, 'raw' | 'recordTimeoutMs'> {
  /** The host's own message object (`ctx.raw`). Default: the record. */
  raw?: unknown;
}

/** What the polling consumer needs of a dispatcher: the dispatch core, or the microservice transport's. */
export interface SqsBatchDispatcher {
  dispatchBatch(records: readonly SqsRecordLike[], source: SqsBatchSource): Promise<SqsRecordResult[]>;
}

/**
 * The dispatch core shared by every host: for each record, decode it (envelopes, route, body: the
 * decoding stage, `SqsMessageDecoding`), validate the event, then call its handlers through Nest's
 * pipeline, under the batch rules of `processSqsBatch`. Never throws for a record: every outcome
 * becomes an `SqsRecordResult`.
 */
@Injectable()
export class SqsDispatcher implements OnModuleInit, SqsBatchDispatcher {
  private readonly queues = new Map<string, ResolvedQueue>();
  private readonly overriddenQueues = new WeakMap<SqsDispatchOptions, Map<string, ResolvedQueue>>();

  private readonly recordLogger: SqsRecordLogger;

  constructor(
    private readonly explorer: SqsHandlerExplorer,
    @Optional() @Inject(SQS_MODULE_OPTIONS) private readonly moduleOptions: SqsModuleOptions = {},
    @Optional() private readonly stats?: IdempotencyStats,
  ) {
    this.recordLogger = new SqsRecordLogger(moduleOptions.recordLog, stats?.journal);
  }

  /**
   * Refuses unusable options and clashing declarations at start-up rather than at the first
   * message, and names the event classes that would accept any body unchecked.
   */
  onModuleInit(): void {
    this.assertUsable();
    this.warnAboutUnvalidatedEvents();
  }

  /**
   * Resolves the options (with a host's `overrides`) and builds the routers of every configured
   * queue and of the handlers bound to no queue; throws what would otherwise fail every batch.
   */
  assertUsable(overrides?: SqsDispatchOptions): void {
    this.queue(UNBOUND_QUEUE, overrides);
    for (const queue of this.moduleOptions.queues ?? []) this.queue(queue.name, overrides);
  }

  private warnAboutUnvalidatedEvents(): void {
    if (this.moduleOptions.validation?.validate === false) return; // said so on purpose
    // Fallback handlers take payloads unvalidated by design: they have no event class to check.
    const handlers = this.explorer.getHandlers().filter((handler) => handler.eventClass !== SqsFallback);
    for (const eventClass of unvalidatedEventClasses(handlers.map((handler) => handler.eventClass))) {
      const users = handlers
        .filter((handler) => handler.eventClass === eventClass)
        .map((handler) => handler.name);
      new Logger('SqsModule').warn(
        `${eventClass.name} (the event of ${users.join(', ')}) has no class-validator decorators: its messages ` +
          'are accepted unchecked, with every field of the body copied onto it. Decorate its fields ' +
          "(@IsString(), @IsInt(), ...), or set SqsModule's validation: { validate: false } to accept bodies as they come.",
      );
    }
  }

  /** Handles a batch of one queue; the results come back in input order. */
  async dispatchBatch(records: readonly SqsRecordLike[], source: SqsBatchSource): Promise<SqsRecordResult[]> {
    const queue = this.queue(source.queue, source.overrides);
    return processSqsBatch(
      records,
      { queue: queue.name, fifo: queue.fifo, ...queue.options, recordTimeoutMs: source.recordTimeoutMs },
      (record, index) =>
        this.handleRecord(record, queue, source.raw?.[index] ?? record, source.remainingTimeMs),
      (record, error, status) => this.rejectRecord(record, queue, error, status),
    );
  }

  /**
   * Handles one record outside `dispatchBatch`, for a host that applies the batch rules itself and
   * serves handlers of its own beside these (`SqsServer`, the microservice transport). `opened` is
   * the record as that host already opened it (`SqsMessageDecoding.open`), so its body is not parsed
   * twice. Never rejects for a record: every outcome becomes an `SqsRecordResult`, logged and
   * counted as in a batch.
   */
  async dispatchRecord(
    record: SqsRecordLike,
    source: SqsRecordSource,
    opened?: SqsOpenedMessage,
  ): Promise<SqsRecordResult> {
    const queue = this.queue(source.queue, source.overrides);
    return this.handleRecord(record, queue, source.raw ?? record, source.remainingTimeMs, opened);
  }

  /**
   * The resolved settings and router of a queue (cached). Throws when the declarations cannot
   * work, e.g. one event type name on two classes.
   */
  queue(name: string, overrides?: SqsDispatchOptions): ResolvedQueue {
    let cache = this.queues;
    if (overrides) {
      cache = this.overriddenQueues.get(overrides) ?? new Map();
      this.overriddenQueues.set(overrides, cache);
    }
    let queue = cache.get(name);
    if (queue === undefined) {
      const declared = this.findQueueOptions(name);
      const options = resolveDispatchOptions([this.moduleOptions, declared, overrides], `queue "${name}"`);
      queue = {
        name,
        fifo: declared?.fifo ?? (name.endsWith('.fifo') || (declared?.url?.endsWith('.fifo') ?? false)),
        options,
        router: new SqsQueueRouter(name, this.explorer.getHandlers(), options.discriminator, {
          aliases: queueAliases(declared),
          discriminatorConfigured: options.discriminatorConfigured,
          hint: declared === undefined && name !== UNBOUND_QUEUE ? this.unconfiguredQueueHint(name) : '',
        }),
        decoding: SqsMessageDecoding.of(name, options),
      };
      cache.set(name, queue);
    }
    return queue;
  }

  /** The queues `SqsModule` lists (what the Lambda host checks its bindings against). */
  get declaredQueues(): readonly SqsQueueOptions[] {
    return this.moduleOptions.queues ?? [];
  }

  private async handleRecord(
    record: SqsRecordLike,
    queue: ResolvedQueue,
    raw: unknown,
    remainingTimeMs: (() => number) | undefined,
    opened?: SqsOpenedMessage,
  ): Promise<SqsRecordResult> {
    const started = performance.now();
    const messageId = typeof record?.messageId === 'string' ? record.messageId : '';
    const context = new SqsContext(record, queue.name, raw, remainingTimeMs);
    let status: SqsRecordStatus;
    let error: Error | undefined;
    try {
      checkRecordShape(record, messageId, queue.name);
      const decoded = await this.decode(record, queue, context, messageId, opened);
      if (decoded.skip !== undefined) {
        // Nothing to handle (an s3:TestEvent): acked on purpose, no handler, no key.
        status = 'SKIPPED';
        error = new SkippedEnvelopeNotice(decoded.skip);
      } else {
        ({ status, error } = await this.runHandlers(context, decoded, remainingTimeMs));
      }
    } catch (caught) {
      status = 'INVALID';
      error = caught as Error;
    }
    const result: SqsRecordResult = {
      messageId,
      status,
      eventType: context.eventType,
      key: context.state.idempotencyKey,
      error,
      durationMs: performance.now() - started,
    };
    if (status === 'INVALID' || error instanceof SkippedEnvelopeNotice) {
      // No handler ran to count them: counted here, under their type when known.
      this.stats?.countCall(
        result.eventType ?? UNKNOWN_EVENT_TYPE,
        NO_HANDLER,
        status,
        undefined,
        result.durationMs,
      );
    }
    this.recordLogger.record(queue.name, result, messageId ? context.receiveCount : 0);
    return result;
  }

  /**
   * A record the batch rules fail without dispatching (a FIFO record behind a failure, or without a
   * group): it is logged and counted like any other.
   */
  private rejectRecord(
    record: SqsRecordLike,
    queue: ResolvedQueue,
    error: Error,
    status: SqsRecordStatus,
  ): SqsRecordResult {
    const result: SqsRecordResult = {
      messageId: typeof record?.messageId === 'string' ? record.messageId : '',
      status,
      error,
      durationMs: 0,
    };
    this.stats?.countCall(UNKNOWN_EVENT_TYPE, NO_HANDLER, status, undefined, 0);
    this.recordLogger.record(queue.name, result, receiveCountOf(record));
    return result;
  }

  /**
   * The decoding stage (envelopes, route, body), then the event class: mapped and validated. A
   * fallback handler gets the payload as it is. Any failure is an `InvalidSqsMessageError` naming
   * the message.
   */
  private async decode(
    record: SqsRecordLike,
    queue: ResolvedQueue,
    context: SqsContext,
    messageId: string,
    opened?: SqsOpenedMessage,
  ): Promise<{ skip: string } | { skip?: undefined; event: object; route: SqsRoute }> {
    try {
      const decoded: SqsDecodedRecord = await queue.decoding.decode(record, queue.router, context, opened);
      if (decoded.skip !== undefined) return { skip: decoded.skip };
      const { route, payload } = decoded;
      if (route.fallback) {
        context.eventType ??= route.eventType;
        return { event: payload, route };
      }
      context.eventType = route.eventType;
      const event = await toEvent(route.eventClass, payload, queue.options.validation);
      return { event, route };
    } catch (error) {
      if (error instanceof InvalidSqsMessageError) throw error;
      throw new InvalidSqsMessageError(messageId, queue.name, (error as Error).message);
    }
  }

  /**
   * Calls the route's handlers in order (`runHandlerChain`: the first failure stops the chain).
   * Each handler gets its own context, so each makes its own idempotency claim.
   */
  private runHandlers(
    context: SqsContext,
    decoded: { event: object; route: SqsRoute },
    remainingTimeMs: (() => number) | undefined,
  ): Promise<SqsHandlerOutcome> {
    const { event, route } = decoded;
    return runHandlerChain(route.handlers, async (handler, i) => {
      const handlerContext = i === 0 ? context : this.fork(context, remainingTimeMs);
      const started = performance.now();
      let outcome: SqsHandlerOutcome;
      try {
        await handler.invoke(event, handlerContext);
        outcome = { status: handlerContext.state.idempotencyOutcome === 'DUPLICATE' ? 'DUPLICATE' : 'OK' };
      } catch (error) {
        outcome = outcomeOfError(error);
      }
      this.stats?.countCall(
        route.eventType,
        handler.name,
        outcome.status,
        handlerContext.state.idempotencyOutcome,
        performance.now() - started,
      );
      return outcome;
    });
  }

  private fork(context: SqsContext, remainingTimeMs: (() => number) | undefined): SqsContext {
    const fork = new SqsContext(context.record, context.queue, context.raw, remainingTimeMs);
    fork.eventType = context.eventType;
    fork.envelopes = context.envelopes;
    fork.envelopeKey = context.envelopeKey;
    return fork;
  }

  private findQueueOptions(name: string): SqsQueueOptions | undefined {
    return this.moduleOptions.queues?.find((queue) => queueAliases(queue).includes(name));
  }

  /**
   * Why a queue name no configured queue answers to may have no handler: in Lambda the name comes
   * from the record's ARN, and a configured queue whose url is unset cannot be matched by it.
   */
  private unconfiguredQueueHint(name: string): string {
    const queues = this.moduleOptions.queues ?? [];
    if (queues.length === 0) return '';
    return (
      `; no queue of SqsModule answers to "${name}" (configured: ${queues.map((q) => `"${q.name}"`).join(', ')}), ` +
      'and a queue is known by its name or the name at the end of its url: set the url of the queue this is ' +
      '(an unset environment variable?), or configure it under this name'
    );
  }
}

/**
 * Why a record was acked without a handler (an envelope with nothing to handle, such as S3's
 * `s3:TestEvent`): the `reason` of its `status=SKIPPED` log line.
 */
export class SkippedEnvelopeNotice extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'SkippedEnvelopeNotice';
  }
}

/** The names a configured queue answers to: its `name`, and the queue name at the end of its URL. */
export function queueAliases(queue: SqsQueueOptions | undefined): string[] {
  if (queue === undefined) return [];
  const urlName = queue.url ? queue.url.slice(queue.url.lastIndexOf('/') + 1) : '';
  return urlName && urlName !== queue.name ? [queue.name, urlName] : [queue.name];
}

/** Refuses what cannot be an SQS message before anything reads it. */
function checkRecordShape(record: SqsRecordLike, messageId: string, queue: string): void {
  if (record === null || typeof record !== 'object') {
    throw new InvalidSqsMessageError(
      '',
      queue,
      `the record is ${record === null ? 'null' : typeof record}, not an object`,
    );
  }
  if (messageId === '') throw new InvalidSqsMessageError('', queue, 'the record has no messageId');
  if (record.eventSource !== undefined && record.eventSource !== 'aws:sqs') {
    throw new InvalidSqsMessageError(
      messageId,
      queue,
      `it is not an SQS record (eventSource ${JSON.stringify(record.eventSource)}); only SQS event sources can feed this handler`,
    );
  }
}

function receiveCountOf(record: SqsRecordLike): number {
  const count = Number(record?.attributes?.ApproximateReceiveCount);
  return Number.isFinite(count) ? count : 0;
}
