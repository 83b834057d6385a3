import { payloadOf } from '../sqs/decoding/sqs-message-decoding';
import { processSqsBatch } from '../sqs/sqs-batch.processor';
import { SqsContext } from '../sqs/sqs-context';
import {
  SkippedEnvelopeNotice,
  SqsBatchDispatcher,
  SqsBatchSource,
  SqsDispatcher,
} from '../sqs/sqs-dispatcher';
import { outcomeOfError, runHandlerChain, SqsHandlerOutcome } from '../sqs/sqs-handler-chain';
import { InvalidSqsMessageError } from '../sqs/sqs-message.errors';
import { describeDiscriminator } from '../sqs/sqs-router';
import type { SqsRecordLike } from '../sqs/sqs-record.interface';
import type { SqsRecordResult, SqsRecordStatus } from '../sqs/sqs-record-result';
import type { SqsRecordLogger } from '../sqs/sqs-record.logger';
import type { SqsServerQueue } from './sqs-server-queue';

/**
 * How the server runs one `@EventPattern()` handler for a message: through Nest's pipeline, and
 * resolving only once the handler's Promise or Observable has ended (rejecting with what the
 * pipeline answered on failure).
 */
export type SqsEventHandlerInvoker<H> = (handler: H, payload: unknown, context: SqsContext) => Promise<void>;

/** The `@EventPattern()` handlers of the server, by event type. */
export interface SqsEventHandlerTable<H> {
  /** The event handlers of a type, in registration order. */
  get(type: string): readonly H[] | undefined;
  /** Event types with a handler. */
  readonly types: readonly string[];
  /** Request-response (`@MessagePattern()`) patterns, which SQS cannot serve (for error messages). */
  isRequestPattern(type: string): boolean;
}

/**
 * The batch dispatch of the microservice transport: for each record, open its envelopes and read
 * its body (the queue's decoding stage, `SqsMessageDecoding`), read its event type (the
 * discriminator, or the type an envelope names), and run the `@EventPattern()` handlers of that
 * type, under the batch rules of `processSqsBatch` (the same as every other host). A type no
 * pattern handles goes to the app's dispatch core when `SqsModule` is there and routes it
 * (`@SqsMessageHandler()` handlers, a fallback handler), with the body opened once.
 *
 * A record is done when its handlers are: the consumer acks (deletes) it only after that, and
 * never a failed one. Never throws for a record: every outcome becomes an `SqsRecordResult`, logged
 * in one line as by the other hosts.
 */
export class SqsServerDispatcher<H> implements SqsBatchDispatcher {
  private sqsDispatcher: SqsDispatcher | undefined;

  constructor(
    private readonly queues: ReadonlyMap<string, SqsServerQueue>,
    private readonly handlers: SqsEventHandlerTable<H>,
    private readonly invoke: SqsEventHandlerInvoker<H>,
    private readonly recordLogger: SqsRecordLogger,
  ) {}

  /**
   * Hands the app's dispatch core over (`SqsModule` present): its event types are served too, once
   * `refreshSqsRoutes()` has learnt them (the server calls it when it starts listening).
   */
  useSqsDispatcher(dispatcher: SqsDispatcher): void {
    this.sqsDispatcher = dispatcher;
  }

  /**
   * Learns which types the dispatch core routes on each queue, and refuses a type both hosts
   * handle (one of them would silently never run). Throws what is wrong.
   */
  refreshSqsRoutes(): void {
    const dispatcher = this.sqsDispatcher;
    if (dispatcher === undefined) return;
    const clashes: string[] = [];
    for (const queue of this.queues.values()) {
      const router = dispatcher.queue(queue.name, queue.options).router;
      const types = router.eventTypes;
      queue.sqsRouter = router;
      queue.sqsTypes = new Set(types);
      for (const type of types) {
        if (this.handlers.get(type)) clashes.push(`"${type}" on queue "${queue.name}"`);
      }
    }
    if (clashes.length > 0) {
      throw new Error(
        `SqsServer: event type(s) ${clashes.join(', ')} have both an @EventPattern() and an @SqsMessageHandler() ` +
          'handler; serve each type with one kind of handler.',
      );
    }
  }

  async dispatchBatch(records: readonly SqsRecordLike[], source: SqsBatchSource): Promise<SqsRecordResult[]> {
    const queue = this.queues.get(source.queue);
    if (queue === undefined) throw new Error(`SqsServer: no queue "${source.queue}"`);
    return processSqsBatch(
      records,
      { queue: queue.name, fifo: queue.fifo, ...queue.options, recordTimeoutMs: source.recordTimeoutMs },
      (record, index) => this.handleRecord(record, queue, source.raw?.[index] ?? record),
      (record, error, status) => this.finish(queue, record, { status, error }, undefined, 0),
    );
  }

  private async handleRecord(
    record: SqsRecordLike,
    queue: SqsServerQueue,
    raw: unknown,
  ): Promise<SqsRecordResult> {
    const started = performance.now();
    const context = new SqsContext(record, queue.name, raw);
    let payload: Record<string, unknown> | undefined;
    let handlers: readonly H[];
    try {
      const opened = queue.decoding.open(record.body);
      if (opened.envelopes.length > 0) {
        context.envelopes = opened.envelopes;
        context.envelopeKey = opened.key;
      }
      if (opened.skip !== undefined) {
        context.eventType = opened.type;
        const notice = new SkippedEnvelopeNotice(opened.skip);
        return this.finish(queue, record, { status: 'SKIPPED', error: notice }, context, started);
      }
      let type: unknown;
      const { discriminator, discriminatorConfigured } = queue.options;
      if (!discriminatorConfigured && opened.type !== undefined) {
        type = opened.type;
      } else if (typeof discriminator === 'object' && 'attribute' in discriminator) {
        type = context.messageAttribute(discriminator.attribute);
      } else {
        payload = await payloadOf(opened.inner, queue.decoding.defaultDecoder, context);
        type = queue.readType(payload, context);
      }
      const route = this.route(queue, type);
      if (route === 'sqs') {
        return this.sqsDispatcher!.dispatchRecord(
          record,
          { queue: queue.name, overrides: queue.options, raw },
          opened,
        );
      }
      context.eventType = route.type;
      handlers = route.handlers;
      payload ??= await payloadOf(opened.inner, queue.decoding.defaultDecoder, context);
    } catch (error) {
      const invalid = new InvalidSqsMessageError(record.messageId, queue.name, (error as Error).message);
      return this.finish(queue, record, { status: 'INVALID', error: invalid }, context, started);
    }
    const event = payload;
    const outcome = await runHandlerChain(handlers, (handler, i) =>
      this.run(handler, event, i === 0 ? context : fork(context)),
    );
    return this.finish(queue, record, outcome, context, started);
  }

  /**
   * The handlers of a record's type, or `'sqs'` for the dispatch core. A message without a type
   * goes to the only handler there is, as on a single-type queue of `SqsModule`. Throws the reason
   * when nothing handles it.
   */
  private route(queue: SqsServerQueue, type: unknown): { type: string; handlers: readonly H[] } | 'sqs' {
    const sqsTypes = queue.sqsTypes;
    const patterns = this.handlers.types;
    // Without patterns, the dispatch core's router decides alone (its single-class queues and its
    // fallback handler); beside patterns, it takes its own types and, with a fallback, the rest.
    if (patterns.length === 0 && queue.sqsRouter?.claims(type)) return 'sqs';
    if (type === undefined || type === null || type === '') {
      if (patterns.length === 1 && sqsTypes.size === 0)
        return { type: patterns[0], handlers: this.handlers.get(patterns[0])! };
      if (queue.sqsRouter?.hasFallback) return 'sqs';
      if (patterns.length + sqsTypes.size === 0) throw new Error(this.noHandlers(queue));
      throw new Error(
        `it has no event type (${describeDiscriminator(queue.options.discriminator)}) and queue "${queue.name}" ` +
          `has handlers for several types (${this.describeTypes(queue)})`,
      );
    }
    if (typeof type === 'string') {
      const handlers = this.handlers.get(type);
      if (handlers) return { type, handlers };
      if (sqsTypes.has(type)) return 'sqs';
    }
    if (queue.sqsRouter?.hasFallback) return 'sqs';
    if (this.handlers.types.length + sqsTypes.size === 0) throw new Error(this.noHandlers(queue));
    const hint =
      typeof type === 'string' && this.handlers.isRequestPattern(type)
        ? `; an @MessagePattern() handler matches it, but SQS has no replies: make it an @EventPattern()`
        : '';
    throw new Error(
      `no handler for event type ${JSON.stringify(type)} on queue "${queue.name}" (handled: ${this.describeTypes(queue)})${hint}`,
    );
  }

  /**
   * Runs one handler and reads its outcome. Nest's exception filters replace an exception before
   * the transport sees it, so the cause comes from the idempotency state when `@Idempotent()` saw
   * it (an ack by `SkipMessageException`, an in-flight duplicate), else from what the filter threw.
   */
  private async run(handler: H, payload: unknown, context: SqsContext): Promise<SqsHandlerOutcome> {
    try {
      await this.invoke(handler, payload, context);
      return { status: context.state.idempotencyOutcome === 'DUPLICATE' ? 'DUPLICATE' : 'OK' };
    } catch (error) {
      const cause = context.state.handlerError ?? error;
      return outcomeOfError(cause instanceof Error ? cause : new Error(describeFilterAnswer(context, cause)));
    }
  }

  private finish(
    queue: SqsServerQueue,
    record: SqsRecordLike,
    outcome: { status: SqsRecordStatus; error?: Error },
    context: SqsContext | undefined,
    started: number,
  ): SqsRecordResult {
    const result: SqsRecordResult = {
      messageId: record?.messageId ?? '',
      status: outcome.status,
      eventType: context?.eventType,
      key: context?.state.idempotencyKey,
      error: outcome.error,
      durationMs: context ? performance.now() - started : 0,
    };
    this.recordLogger.record(queue.name, result, context?.receiveCount ?? receiveCountOf(record));
    return result;
  }

  private noHandlers(queue: SqsServerQueue): string {
    return `no @EventPattern() handler (nor @SqsMessageHandler() of SqsModule) serves queue "${queue.name}"`;
  }

  private describeTypes(queue: SqsServerQueue): string {
    const patterns = this.handlers.types.map((type) => `@EventPattern('${type}')`);
    const sqs = [...queue.sqsTypes].map((type) => `@SqsMessageHandler of "${type}"`);
    return [...patterns, ...sqs].join(', ') || 'none';
  }
}

/** A context of its own for each further handler of a record, so each makes its own claim. */
function fork(context: SqsContext): SqsContext {
  const copy = new SqsContext(context.record, context.queue, context.raw);
  copy.eventType = context.eventType;
  copy.envelopes = context.envelopes;
  copy.envelopeKey = context.envelopeKey;
  return copy;
}

function describeFilterAnswer(context: SqsContext, answer: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(answer) ?? String(answer);
  } catch {
    text = String(answer);
  }
  return (
    `the @EventPattern('${context.eventType}') handler failed; its exception filter answered ${text} ` +
    '(Nest logs the cause under RpcExceptionsHandler)'
  );
}

function receiveCountOf(record: SqsRecordLike): number {
  const count = Number(record?.attributes?.ApproximateReceiveCount);
  return Number.isFinite(count) ? count : 0;
}
