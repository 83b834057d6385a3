import { payloadOf } from '../sqs/decoding/sqs-message-decoding';
import type { SqsContext } from '../sqs/sqs-context';
import type { SqsDispatcher } from '../sqs/sqs-dispatcher';
import type { SqsRecordLike } from '../sqs/sqs-record.interface';
import type { SqsRouteHandler, SqsRoutedRecord } from '../sqs/sqs-record-pipeline';
import { describeDiscriminator } from '../sqs/sqs-router';
import type { SqsServerQueue } from './sqs-server-queue';
import { SqsConfigurationError } from '../common/sqs-idempotency.error';

/** Runs one `@EventPattern()` handler through Nest's pipeline, resolving once its Promise or Observable ended. */
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
 * The transport's routes: each record's type picks its `@EventPattern()` handlers; a type none handles
 * goes to `SqsModule`'s routes when the app has them, logged and counted there.
 */
export class SqsServerRouter<H> {
  private sqsDispatcher: SqsDispatcher | undefined;
  /** Each `@EventPattern()` handler as the pipeline calls it (built once per handler). */
  private readonly routeHandlers = new Map<H, SqsRouteHandler>();

  constructor(
    private readonly queues: ReadonlyMap<string, SqsServerQueue>,
    private readonly handlers: SqsEventHandlerTable<H>,
    private readonly invoke: SqsEventHandlerInvoker<H>,
  ) {}

  /** Takes the app's record pipeline; its types are served once `refreshSqsRoutes()` learnt them. */
  useSqsDispatcher(dispatcher: SqsDispatcher): void {
    this.sqsDispatcher = dispatcher;
  }

  /** Learns each queue's `SqsModule` types, refusing one both hosts handle (one would never run). */
  refreshSqsRoutes(): void {
    const dispatcher = this.sqsDispatcher;
    if (dispatcher === undefined) return;
    const clashes: string[] = [];
    for (const queue of this.queues.values()) {
      const sqsQueue = dispatcher.queue(queue.name, queue.options);
      const types = sqsQueue.router.eventTypes;
      queue.sqsQueue = sqsQueue;
      queue.sqsTypes = new Set(types);
      for (const type of types) {
        if (this.handlers.get(type)) clashes.push(`"${type}" on queue "${queue.name}"`);
      }
    }
    if (clashes.length > 0) {
      throw new SqsConfigurationError(
        `SqsServer: event type(s) ${clashes.join(', ')} have both an @EventPattern() and an @SqsMessageHandler() ` +
          'handler; serve each type with one kind of handler.',
      );
    }
  }

  /** The route of a record of `queue`; throws the reason when nothing handles it. */
  async route(queue: SqsServerQueue, record: SqsRecordLike, context: SqsContext): Promise<SqsRoutedRecord> {
    let payload: Record<string, unknown> | undefined;
    const opened = queue.decoding.open(record.body);
    if (opened.envelopes.length > 0) {
      context.envelopes = opened.envelopes;
      context.envelopeKey = opened.key;
    }
    if (opened.skip !== undefined) {
      context.eventType = opened.type;
      return { kind: 'skip', reason: opened.skip };
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
    const route = this.routeOf(queue, type);
    if (route === 'sqs') {
      const routed = await queue.sqsQueue!.route(record, context, opened);
      return { ...routed, sink: this.sqsDispatcher!.sink };
    }
    context.eventType = route.type;
    payload ??= await payloadOf(opened.inner, queue.decoding.defaultDecoder, context);
    return {
      kind: 'handlers',
      event: payload,
      eventType: route.type,
      handlers: route.handlers.map((handler) => this.routeHandler(handler)),
    };
  }

  /** A record type's handlers, or `'sqs'`; a typeless message goes to the only handler; throws when none. */
  private routeOf(queue: SqsServerQueue, type: unknown): { type: string; handlers: readonly H[] } | 'sqs' {
    const sqsTypes = queue.sqsTypes;
    const patterns = this.handlers.types;
    // Without patterns, the record pipeline's router decides alone (its single-class queues and its
    // fallback handler); beside patterns, it takes its own types and, with a fallback, the rest.
    if (patterns.length === 0 && queue.sqsQueue?.router.claims(type)) return 'sqs';
    if (type === undefined || type === null || type === '') {
      if (patterns.length === 1 && sqsTypes.size === 0)
        return { type: patterns[0], handlers: this.handlers.get(patterns[0])! };
      if (queue.sqsQueue?.router.hasFallback) return 'sqs';
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
    if (queue.sqsQueue?.router.hasFallback) return 'sqs';
    if (this.handlers.types.length + sqsTypes.size === 0) throw new Error(this.noHandlers(queue));
    const hint =
      typeof type === 'string' && this.handlers.isRequestPattern(type)
        ? `; an @MessagePattern() handler matches it, but SQS has no replies: make it an @EventPattern()`
        : '';
    throw new Error(
      `no handler for event type ${JSON.stringify(type)} on queue "${queue.name}" (handled: ${this.describeTypes(queue)})${hint}`,
    );
  }

  /** A handler as the pipeline calls it; its failure is the cause `@Idempotent()` saw, not what Nest's filter made of it. */
  private routeHandler(handler: H): SqsRouteHandler {
    let routeHandler = this.routeHandlers.get(handler);
    if (routeHandler === undefined) {
      routeHandler = {
        name: (handler as { name?: string }).name ?? 'EventPattern',
        invoke: async (payload, context) => {
          try {
            await this.invoke(handler, payload, context);
          } catch (error) {
            const cause = context.state.handlerError ?? error;
            throw cause instanceof Error ? cause : new Error(describeFilterAnswer(context, cause));
          }
        },
      };
      this.routeHandlers.set(handler, routeHandler);
    }
    return routeHandler;
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
