import { Inject, Injectable, Logger, OnModuleInit, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { SQS_LAMBDA_HOST, SQS_MODULE_OPTIONS } from '../sqs.constants';
import { RecordObservers } from '../../idempotency/record-observer';
import type { IdempotentHandlerRegistry } from '../../idempotency/idempotent-handler.registry';
import type { IdempotencyPolicy } from '../../idempotency/idempotency-policy';
import { IDEMPOTENT_HANDLER_POLICIES } from '../../idempotency/idempotency.constants';
import { IdempotencyConfigurationError } from '../../common/sqs-idempotency.error';
import { IdempotencyStore } from '../../stores/idempotency-store.interface';
import { declaredProperties } from '../routing/sqs-event.validator';
import { loadPlainEventMapper } from '../routing/plain-event.mapper';
import { SqsFallback } from '../sqs-fallback.decorator';
import { SqsHandlerDefinition, SqsHandlerExplorer } from './sqs-handler.explorer';
import type { SqsDispatchOptions, SqsModuleOptions, SqsQueueOptions } from '../sqs-module-options.interface';
import {
  isFifoQueue,
  resolveDispatchOptions,
  ResolvedQueue,
  resolveQueue,
} from '../routing/sqs-queue.resolver';
import type { SqsRecordLike } from '../sqs-record.interface';
import type { SqsRecordResult } from '../../idempotency/record-outcome';
import { SqsRecordSink } from '../pipeline/sqs-record.sink';
import { SqsBatchDispatcher, SqsBatchSource, SqsRecordPipeline } from '../pipeline/sqs-record.pipeline';
import { SqsQueueRouter } from '../routing/sqs-queue.router';

/** The queue of handlers bound to no queue, built at start-up to check them; no SQS queue name holds a `*`. */
const UNBOUND_QUEUE = '*';

/**
 * `SqsModule`'s queue registry: each queue's `@SqsMessageHandler()` routes (options, router, decoding,
 * built once and checked at start-up) and the pipeline that runs them. The Lambda host and
 * the polling consumers hand it batches; `SqsServer` routes the types it does not serve here.
 */
@Injectable()
export class SqsQueueRegistry implements OnModuleInit, SqsBatchDispatcher {
  private readonly queues = new Map<string, ResolvedQueue>();
  private readonly overriddenQueues = new WeakMap<SqsDispatchOptions, Map<string, ResolvedQueue>>();

  /** The warnings of `onModuleInit`, kept for `startupWarnings`. */
  private readonly warnings: string[] = [];

  /** Where the records of these routes are logged and counted. */
  readonly sink: SqsRecordSink;
  private readonly pipeline: SqsRecordPipeline;
  /** The key-path warnings said (each once, whichever host asks again). */
  private readonly keyPathWarnings = new Set<string>();
  /** The `@Idempotent()` handlers keyed by a path, found at start-up; none without `IdempotencyModule`. */
  private keyedHandlers: ReadonlyArray<readonly [SqsHandlerDefinition, IdempotencyPolicy]> = [];
  /** The checks of `@SqsBatchHandler()` declarations, loaded by `prepareQueues()` where the app has one. */
  private batchChecks: typeof import('../routing/sqs-batch-handler.checks') | undefined;
  private preparing: Promise<void> | undefined;
  /** The key-path check, loaded at start-up where a handler is keyed by a path. */
  private keyPathCheck: typeof import('../routing/event-key-path.check') | undefined;

  constructor(
    private readonly explorer: SqsHandlerExplorer,
    private readonly moduleRef: ModuleRef,
    @Optional() @Inject(SQS_MODULE_OPTIONS) private readonly moduleOptions: SqsModuleOptions = {},
    /** The app's record observers (with `IdempotencyModule`): the claims' span events join them. */
    @Optional() readonly observers?: RecordObservers,
    @Optional() @Inject(SQS_LAMBDA_HOST) private readonly lambdaHost?: boolean,
  ) {
    this.sink = new SqsRecordSink(moduleOptions.recordLog, observers);
    this.pipeline = new SqsRecordPipeline(this.sink);
  }

  /** Refuses unusable options and clashing declarations at start-up, and names unvalidated event classes. */
  async onModuleInit(): Promise<void> {
    await this.prepareQueues();
    this.assertUsable();
    this.warnAboutUnvalidatedEvents();
    // The check of a fallback beside one class loads only where the app has a fallback handler.
    if (this.explorer.getHandlers().some((handler) => handler.eventClass === SqsFallback)) {
      const { fallbackBesideOneClass } = await import('./sqs-fallback.warning');
      for (const name of new Set([UNBOUND_QUEUE, ...this.declaredQueues.map((queue) => queue.name)])) {
        const warning = fallbackBesideOneClass(this.queue(name).router, name === UNBOUND_QUEUE);
        if (warning !== undefined) this.warn('SqsModule', warning);
      }
    }
    this.warnAboutUnprovidedHandlerClasses();
    // The key-path check reads class-transformer's types; a Lambda host checks with its own options.
    await loadPlainEventMapper();
    this.keyedHandlers = this.findKeyedHandlers();
    // Loaded only where a handler reads its key by a path: an app without IdempotencyModule, or keyed by
    // functions only, never loads it.
    if (this.keyedHandlers.length > 0) this.keyPathCheck = await import('../routing/event-key-path.check');
    if (!this.lambdaHost) this.checkKeyPaths();
    await this.pipeline.startTracing(this.moduleOptions.tracing, 'SqsModule', this.observers);
  }

  /**
   * Loads what building a queue's routes needs, where the app uses it (the batch-handler checks): `queue()`
   * works once it has resolved. `onModuleInit` awaits it; a host that builds routes before the app's
   * init (`SqsServer`, started before a hybrid app's init) awaits it first.
   */
  prepareQueues(): Promise<void> {
    return (this.preparing ??= (async () => {
      if (this.explorer.getHandlers().some((handler) => handler.batch !== undefined)) {
        this.batchChecks = await import('../routing/sqs-batch-handler.checks');
      }
    })());
  }

  /**
   * The `@Idempotent()` handlers whose key is read by a path, with their policies; a transactional batch
   * handler's store is checked on the way.
   */
  private findKeyedHandlers(): Array<[SqsHandlerDefinition, IdempotencyPolicy]> {
    let registry: IdempotentHandlerRegistry;
    try {
      registry = this.moduleRef.get(IDEMPOTENT_HANDLER_POLICIES, { strict: false });
    } catch {
      return []; // no IdempotencyModule: nothing is idempotent
    }
    return this.explorer.getHandlers().flatMap((handler) => {
      if (handler.eventClass === SqsFallback) return []; // it takes payloads as they come
      const policy = registry.policyFor(handler.method, handler.classRef);
      if (handler.batch !== undefined && policy?.transactional) {
        this.batchChecks!.checkTransactionalBatch(
          handler.name,
          this.moduleRef.get(IdempotencyStore, { strict: false }),
        );
      }
      return policy?.keyPath === undefined ? [] : [[handler, policy]];
    });
  }

  /**
   * Judges each `@Idempotent()` handler's key path on the queues it takes (`event-key-path.check.ts`):
   * the declared queues it is bound to (or, unbound, all of them), else any queue, with `SqsModule`'s options.
   */
  private checkKeyPaths(overrides?: SqsDispatchOptions): void {
    for (const [handler, policy] of this.keyedHandlers) {
      const declared = (this.moduleOptions.queues ?? []).filter(
        (queue) => handler.queue === undefined || queueAliases(queue).includes(handler.queue),
      );
      const names = declared.length > 0 ? declared.map((queue) => queue.name) : [UNBOUND_QUEUE];
      const judged = this.keyPathCheck!.judgeKeyPath(
        handler.eventClass,
        { ...policy.keyPath!, handlerName: policy.handlerName, requireKey: policy.requireKey },
        names.map((name) => this.queue(name, overrides)),
      );
      if (judged?.error !== undefined) throw new IdempotencyConfigurationError(judged.error);
      if (judged?.warning === undefined || this.keyPathWarnings.has(judged.warning)) continue;
      this.keyPathWarnings.add(judged.warning);
      this.warn('Idempotency', judged.warning);
    }
  }

  /**
   * Names each class with `@SqsMessageHandler()` methods that no module of the app provides, when one
   * of its handlers could receive records here: Nest never creates it, so they would fail as having no
   * handler. A class whose handlers are bound only to queues this app does not consume (a producer
   * importing event classes from a consumer's file) is left alone.
   */
  private warnAboutUnprovidedHandlerClasses(): void {
    const missing = this.explorer
      .unprovidedHandlerClasses()
      .filter(([, queues]) => [...queues].some((queue) => this.consumes(queue)))
      .map(([type]) => type.name);
    if (missing.length === 0) return;
    const one = missing.length === 1;
    // Its own context: apps filter it apart (a test file may hold several apps, each with its own handlers).
    this.warn(
      'SqsHandlers',
      `${missing.join(', ')} ${one ? 'has' : 'have'} @SqsMessageHandler() methods but ${one ? 'is not a provider' : 'are not providers'} ` +
        'of this app: Nest never creates them, so their handlers never run and their messages fail as having no ' +
        'handler. Add each to the providers of a module the app imports (if another app in this process provides ' +
        'it, ignore this).',
    );
  }

  /** Whether a handler bound to `queue` (`undefined`: to none) could receive records in this app. */
  private consumes(queue: string | undefined): boolean {
    if (this.lambdaHost) return true; // any queue of the event source mappings, named by its ARN
    const declared = this.moduleOptions.queues ?? [];
    // No queues declared: records come from SqsTestClient, to the app's own handlers if it has any.
    if (declared.length === 0) return this.explorer.getHandlers().length > 0;
    // A handler without a queue is refused beside several (checkQueueBindings): it cannot be missing there.
    if (queue === undefined) return declared.length === 1 && declared[0].consume !== false;
    return declared.some(
      (candidate) => candidate.consume !== false && queueAliases(candidate).includes(queue),
    );
  }

  /**
   * What the app's handlers and event classes earned at start-up (logged as warnings), for
   * `SqsTestClient.startupWarnings`: Nest's testing module prints no warning.
   */
  get startupWarnings(): readonly string[] {
    return [...this.explorer.startupWarnings, ...this.warnings];
  }

  private warn(context: string, message: string): void {
    new Logger(context).warn(message);
    this.warnings.push(message);
  }

  /**
   * Builds every queue's router (with a host's `overrides`), throwing what would fail every batch; with
   * `overrides`, checks the key paths on the queues as that host runs them.
   */
  assertUsable(overrides?: SqsDispatchOptions): void {
    this.queue(UNBOUND_QUEUE, overrides);
    for (const queue of this.moduleOptions.queues ?? []) this.queue(queue.name, overrides);
    if (overrides !== undefined) this.checkKeyPaths(overrides);
  }

  private warnAboutUnvalidatedEvents(): void {
    if (this.moduleOptions.validation?.validate === false) return; // said so on purpose
    // Fallback handlers take payloads unvalidated by design: they have no event class to check.
    const handlers = this.explorer.getHandlers().filter((handler) => handler.eventClass !== SqsFallback);
    for (const eventClass of new Set(handlers.map((handler) => handler.eventClass))) {
      if (declaredProperties(eventClass).size > 0) continue;
      const users = handlers
        .filter((handler) => handler.eventClass === eventClass)
        .map((handler) => handler.name);
      this.warn(
        'SqsModule',
        `${eventClass.name} (the event of ${users.join(', ')}) has no class-validator decorators: its messages ` +
          'are accepted unchecked, with every field of the body copied onto it. Decorate its fields ' +
          "(@IsString(), @IsInt(), ...), or set SqsModule's validation: { validate: false } to accept bodies as they come.",
      );
    }
  }

  /** Handles a batch of one queue; the results come back in input order. */
  dispatchBatch(records: readonly SqsRecordLike[], source: SqsBatchSource): Promise<SqsRecordResult[]> {
    return this.pipeline.run(records, this.queue(source.queue, source.overrides), source);
  }

  /** A queue's resolved settings and router (cached); throws for declarations that cannot work. */
  queue(name: string, overrides?: SqsDispatchOptions): ResolvedQueue {
    let cache = overrides ? this.overriddenQueues.get(overrides) : this.queues;
    if (cache === undefined) this.overriddenQueues.set(overrides!, (cache = new Map()));
    let queue = cache.get(name);
    if (queue === undefined) {
      const declared = this.moduleOptions.queues?.find((queue) => queueAliases(queue).includes(name));
      const options = resolveDispatchOptions([this.moduleOptions, declared, overrides], `queue "${name}"`);
      const router = new SqsQueueRouter(name, this.explorer.getHandlers(), options.discriminator, {
        aliases: queueAliases(declared),
        discriminatorConfigured: options.discriminatorConfigured,
        hint:
          declared === undefined && name !== UNBOUND_QUEUE
            ? () => this.unconfiguredQueueHint(name)
            : undefined,
      });
      const fifo = isFifoQueue(name, declared);
      if (router.batchRoutes.length > 0) this.batchChecks!.checkBatchRoutes(name, fifo, router.batchRoutes);
      queue = resolveQueue(name, fifo, options, router);
      cache.set(name, queue);
    }
    return queue;
  }

  /** The queues `SqsModule` lists (what the Lambda host checks its bindings against). */
  get declaredQueues(): readonly SqsQueueOptions[] {
    return this.moduleOptions.queues ?? [];
  }

  /** Why an unknown queue name may have no handler: in Lambda it comes from the ARN, and an unset url matches nothing. */
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

/** The names a configured queue answers to: its `name`, and the queue name at the end of its URL. */
export function queueAliases(queue: SqsQueueOptions | undefined): string[] {
  if (queue === undefined) return [];
  const urlName = queue.url ? queue.url.slice(queue.url.lastIndexOf('/') + 1) : '';
  return urlName && urlName !== queue.name ? [queue.name, urlName] : [queue.name];
}
