import { Logger } from '@nestjs/common';
import { CustomTransportStrategy, MessageHandler, Server } from '@nestjs/microservices';
import { isObservable, lastValueFrom } from 'rxjs';
import type { Consumer } from 'sqs-consumer';
import { SQS_QUEUE_REGISTRY_BINDING } from '../sqs/sqs.constants';
import { checkConsumerEventName, SqsConsumerEventName } from '../sqs/consumer/sqs-consumer-event.decorator';
import { isolateListener } from '../sqs/consumer/sqs-consumer-event.listeners';
import { SqsConsumerSet } from '../sqs/consumer/sqs-consumer-set';
import type { SqsContext } from '../sqs/sqs-context';
import type { SqsQueueRegistry } from '../sqs/nest/sqs-queue.registry';
import type { SqsRecordResult } from '../idempotency/record-outcome';
import type { SqsRecordLike } from '../sqs/sqs-record.interface';
import { SqsBatchSource, SqsRecordPipeline } from '../sqs/pipeline/sqs-record.pipeline';
import { SqsRecordSink } from '../sqs/pipeline/sqs-record.sink';
import type { ResolvedSqsDispatchOptions } from '../sqs/sqs-module-options.interface';
import {
  isFifoQueue,
  resolveDispatchOptions,
  ResolvedQueue,
  resolveQueue,
} from '../sqs/routing/sqs-queue.resolver';
import { SqsQueueRouter, SqsRoutable, SqsRouterOptions } from '../sqs/routing/sqs-queue.router';
import { SqsConfigurationError } from '../common/sqs-idempotency.error';
import { SqsRpcContext } from './sqs-rpc.context';
import type { SqsServerOptions, SqsServerQueueOptions } from './sqs-server-options.interface';
import { checkQueueName } from '../sqs/consumer/sqs-queue-bindings';
import { MODULE_OPTION_SHAPE, QUEUE_OPTION_SHAPE, readSqsHostOptions } from '../sqs/sqs-options.reader';

// SqsModule's options, less what only the module has (autoStart, producer, a queue's consume).
const { autoStart: _autoStart, producer: _producer, ...SERVER_SHAPE } = MODULE_OPTION_SHAPE;
const { consume: _consume, ...SERVER_QUEUE_SHAPE } = QUEUE_OPTION_SHAPE;

/** `SqsServer`'s transport id: `@EventPattern('x', SQS_TRANSPORT)` binds a handler to it alone. */
export const SQS_TRANSPORT = Symbol('SQS_TRANSPORT');

/** `status` of the server: `'listening'` once every queue is polled, `'closed'` after `close()`. */
export type SqsServerStatus = 'listening' | 'closed';

/** Listeners of `server.on(event, ...)`: the consumer events of every queue (`SqsConsumerEventName`). */
export type SqsServerEvents = Record<SqsConsumerEventName, (...args: any[]) => void>;

/**
 * SQS as a Nest microservice transport: `@EventPattern()` handlers receive the events of its queues by
 * type. It is `SqsModule`'s polling host with Nest's handlers on top: a message is acked only once its
 * handlers ended (Nest's `handleEvent` does not wait), failures come back, `@Idempotent()` holds, and
 * `close()` drains. A hybrid app without `SqsModule` should `await server.close()` before `app.close()`.
 *
 * @example
 * ```ts
 * const app = await NestFactory.createMicroservice(AppModule, {
 *   strategy: new SqsServer({ queues: [{ name: 'orders', url: process.env.ORDERS_QUEUE_URL! }] }),
 * });
 * ```
 */
export class SqsServer extends Server<SqsServerEvents, SqsServerStatus> implements CustomTransportStrategy {
  protected override readonly logger = new Logger('SqsServer');
  private readonly queues: Map<string, SqsServerQueue>;
  /** Its `@EventPattern()` handlers as routes take them, in registration order (see `addHandler`). */
  private readonly patterns: SqsRoutable[] = [];
  /** `SqsModule`'s side, when the app has one: the types no `@EventPattern()` handles go there. */
  private queueRegistry: SqsQueueRegistry | undefined;
  /** The one record pipeline, with this server's record log (no counters: `@Idempotent()` counts RPC calls). */
  private readonly pipeline: SqsRecordPipeline;
  private readonly consumers: SqsConsumerSet;
  private readonly tracingOptions: SqsServerOptions['tracing'];
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(given: SqsServerOptions) {
    super();
    const options = readSqsHostOptions(given, 'SqsServer options', SERVER_SHAPE, SERVER_QUEUE_SHAPE);
    this.queues = resolveServerQueues(options);
    this.transportId = SQS_TRANSPORT;
    this.pipeline = new SqsRecordPipeline(new SqsRecordSink(options.recordLog));
    this.tracingOptions = options.tracing;
    this.consumers = new SqsConsumerSet({
      host: 'SqsServer',
      dispatcher: { dispatchBatch: (records, source) => this.dispatchBatch(records, source) },
      options,
    });
  }

  /** Keeps each handler of a pattern on its own, so they run in order with their own contexts (claims). */
  override addHandler(
    pattern: unknown,
    callback: MessageHandler,
    isEventHandler = false,
    extras: Record<string, any> = {},
  ): void {
    const route = this.normalizePattern(pattern as string);
    callback.isEventHandler = isEventHandler;
    callback.extras = extras;
    if (!this.messageHandlers.has(route)) this.messageHandlers.set(route, callback);
    if (isEventHandler) this.patterns.push(this.routable(route, callback));
  }

  /** Starts polling every queue; Nest calls it from `app.listen()` / `app.startAllMicroservices()`. */
  async listen(callback: (error?: unknown) => void): Promise<void> {
    this.starting ??= this.start();
    await this.starting.then(() => callback(), callback);
  }

  /** Stops polling, waits for the handlers in flight to finish and be acked, then releases the clients. */
  async close(): Promise<void> {
    this.closing ??= this.stop();
    await this.closing;
  }

  /** Listens to a consumer event of every queue, as `@SqsConsumerEventHandler()` does for `SqsModule`. */
  on<EventKey extends keyof SqsServerEvents = keyof SqsServerEvents>(
    event: EventKey,
    callback: SqsServerEvents[EventKey],
  ): void {
    checkConsumerEventName('SqsServer.on()', event);
    this.consumers.listenOnEveryQueue({
      event,
      listener: isolateListener(`A listener of SqsServer's '${event}' event`, this.logger, callback),
    });
  }

  /** The sqs-consumer `Consumer` of every queue, by queue name (once listening). */
  unwrap<T = ReadonlyMap<string, Consumer>>(): T {
    if (this.consumers.byName.size === 0) {
      throw new Error('SqsServer is not listening: call app.listen() or app.startAllMicroservices() first.');
    }
    return new Map([...this.consumers.byName].map(([name, consumer]) => [name, consumer.sqsConsumer])) as T;
  }

  /** Called by `SqsModule` (its `SqsTransportBinder`) with the app's record pipeline. */
  [SQS_QUEUE_REGISTRY_BINDING](registry: SqsQueueRegistry): void {
    this.queueRegistry = registry;
    // Bound before listening, as Nest orders things; a late binding takes effect as soon as the
    // registry can build routes (its refusal, logged: nothing here can return it to a caller).
    if (this.consumers.byName.size > 0) {
      registry
        .prepareQueues()
        .then(() => this.routeQueues())
        .catch((error: unknown) =>
          this.logger.error(`SqsModule's handlers not bound: ${describeError(error)}`),
        );
    }
  }

  private dispatchBatch(
    records: readonly SqsRecordLike[],
    source: SqsBatchSource,
  ): Promise<SqsRecordResult[]> {
    // Its consumers are those of its queues: every batch names one of them.
    return this.pipeline.run(records, this.queues.get(source.queue)!.resolved, source);
  }

  /**
   * Routes each queue's types to the `@EventPattern()` handlers and, with `SqsModule`, to its
   * `@SqsMessageHandler()` handlers (logged and counted there), refusing a type both handle.
   */
  private routeQueues(): void {
    const registry = this.queueRegistry;
    const patternTypes = new Set(this.patterns.map((pattern) => pattern.eventType));
    const options: SqsRouterOptions = {
      handlerKind: '@EventPattern() or @SqsMessageHandler()',
      hint: (type) =>
        typeof type === 'string' && this.messageHandlers.get(type)?.isEventHandler === false
          ? '; an @MessagePattern() handler matches it, but SQS has no replies: make it an @EventPattern()'
          : '',
      sink: registry?.sink,
    };
    const clashes: string[] = [];
    for (const queue of this.queues.values()) {
      const { declared, options: own } = queue;
      const served = registry?.queue(declared.name, own);
      if (served !== undefined && served.router.batchRoutes.length > 0) {
        throw new SqsConfigurationError(
          `SqsServer: queue "${declared.name}" has an @SqsBatchHandler(), which SqsServer does not run (its ` +
            "transport hands events one at a time). Consume that queue with SqsModule's polling (queues: [{ name, url }]) " +
            'or createSqsLambdaHandler(), and leave it out of SqsServer, or make the handler an @SqsMessageHandler().',
        );
      }
      const clashing = served?.router.eventTypes.filter((type) => patternTypes.has(type)) ?? [];
      clashes.push(...clashing.map((type) => `"${type}" on queue "${declared.name}"`));
      if (clashes.length > 0) continue;
      const router = served
        ? served.router.withHandlers(this.patterns, options)
        : new SqsQueueRouter(declared.name, this.patterns, own.discriminator, {
            ...options,
            discriminatorConfigured: own.discriminatorConfigured,
          });
      queue.resolved = resolveQueue(declared.name, queue.resolved.fifo, served?.options ?? own, router);
    }
    if (clashes.length > 0) {
      throw new SqsConfigurationError(
        `SqsServer: event type(s) ${clashes.join(', ')} have both an @EventPattern() and an @SqsMessageHandler() ` +
          'handler; serve each type with one kind of handler.',
      );
    }
  }

  private async start(): Promise<void> {
    await this.queueRegistry?.prepareQueues();
    this.routeQueues();
    await this.pipeline.startTracing(this.tracingOptions, 'SqsServer', this.queueRegistry?.observers);
    // Its routes hold its @EventPattern() handlers and SqsModule's: none on any queue, nothing can succeed.
    if ([...this.queues.values()].every((queue) => queue.resolved.router.eventTypes.length === 0)) {
      this.logger.warn(
        'No @EventPattern() handler is registered (nor an @SqsMessageHandler() of SqsModule): every message will fail.',
      );
    }
    await this.consumers.create([...this.queues.values()].map(({ declared }) => ({ queue: declared })));
    await this.consumers.open();
    this._status$.next('listening');
  }

  private async stop(): Promise<void> {
    await this.starting?.catch(() => undefined);
    await this.consumers.close();
    this._status$.next('closed');
  }

  /**
   * An `@EventPattern()` handler as routes take it: called through Nest's pipeline (and its processing
   * hooks), resolving when it has ended; its failure is the cause `@Idempotent()` saw, not what Nest's
   * filter made of it.
   */
  private routable(eventType: string, handler: MessageHandler): SqsRoutable {
    const invoke = (payload: unknown, rpcContext: SqsRpcContext) =>
      new Promise<void>((resolve, reject) => {
        this.onProcessingStartHook(this.transportId!, rpcContext, async () => {
          try {
            const result = await handler(payload, rpcContext);
            if (isObservable(result)) await lastValueFrom(result, { defaultValue: undefined });
            resolve();
          } catch (error) {
            reject(error);
          } finally {
            this.onProcessingEndHook?.(this.transportId!, rpcContext);
          }
        });
      });
    return {
      // Nest's handler functions are all named alike (`eventHandler`): the pattern says which it is.
      name: `@EventPattern('${eventType}')`,
      eventType,
      eventClass: undefined,
      queue: undefined,
      invoke: (payload, context) =>
        invoke(payload, new SqsRpcContext(context)).catch((error: unknown) => {
          const cause = context.state.handlerError ?? error;
          throw cause instanceof Error ? cause : new Error(describeFilterAnswer(context, cause));
        }),
    };
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

/** A queue as `SqsServer` runs it: its declaration, its options, and its routes (built again once the handlers are known). */
interface SqsServerQueue {
  readonly declared: SqsServerQueueOptions;
  /** The server's options, then the queue's. */
  readonly options: ResolvedSqsDispatchOptions;
  resolved: ResolvedQueue;
}

/** Checks and resolves `new SqsServer()`'s queues, so a typo fails where the server is built. */
function resolveServerQueues(options: SqsServerOptions): Map<string, SqsServerQueue> {
  const queues = new Map<string, SqsServerQueue>();
  const problems: string[] = [];
  if (!Array.isArray(options.queues) || options.queues.length === 0) {
    throw new SqsConfigurationError(
      'SqsServer: give at least one queue: new SqsServer({ queues: [{ name, url }] }).',
    );
  }
  for (const queue of options.queues) {
    const { name } = queue;
    checkQueueName(name, queues, problems);
    if (typeof queue.url !== 'string' || queue.url.length === 0) {
      problems.push(
        `queue "${name}" has no url (${JSON.stringify(queue.url)}); an unset environment variable?`,
      );
      continue;
    }
    try {
      const resolved = resolveDispatchOptions([options, queue], `SqsServer queue "${name}"`);
      const router = new SqsQueueRouter(name, [], resolved.discriminator);
      queues.set(name, {
        declared: queue,
        options: resolved,
        resolved: resolveQueue(name, isFifoQueue(name, queue), resolved, router),
      });
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  if (problems.length > 0)
    throw new SqsConfigurationError(`SqsServer cannot start:\n- ${problems.join('\n- ')}`);
  return queues;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
