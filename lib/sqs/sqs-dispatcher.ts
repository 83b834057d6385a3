import { Inject, Injectable, Logger, OnModuleInit, Optional } from '@nestjs/common';
import { SQS_MODULE_OPTIONS } from './sqs.constants';
import { RECORD_OBSERVER, type RecordObserver } from '../idempotency/record-observer';
import { declaredProperties } from './event-key-path.check';
import { SqsFallback } from './sqs-fallback.decorator';
import { SqsHandlerExplorer } from './sqs-handler.explorer';
import type { SqsDispatchOptions, SqsModuleOptions, SqsQueueOptions } from './sqs-module-options.interface';
import { isFifoQueue, resolveDispatchOptions, ResolvedQueue, resolveQueue } from './sqs-queue.resolver';
import type { SqsRecordLike } from './sqs-record.interface';
import type { SqsRecordResult } from '../idempotency/record-outcome';
import { SqsRecordLogger } from './sqs-record.logger';
import { SqsBatchDispatcher, SqsBatchSource, SqsRecordPipeline } from './sqs-record-pipeline';
import { SqsQueueRouter } from './sqs-router';

/** The queue of handlers bound to no queue, built at start-up to check them; no SQS queue name holds a `*`. */
const UNBOUND_QUEUE = '*';

/**
 * `SqsModule`'s side of the pipeline: each queue's `@SqsMessageHandler()` routes (options, router,
 * decoding, built once and checked at start-up) and the pipeline that runs them. The Lambda host and
 * the polling consumers hand it batches; `SqsServer` routes the types it does not serve here.
 */
@Injectable()
export class SqsDispatcher implements OnModuleInit, SqsBatchDispatcher {
  private readonly queues = new Map<string, ResolvedQueue>();
  private readonly overriddenQueues = new WeakMap<SqsDispatchOptions, Map<string, ResolvedQueue>>();

  /** Where the records of these routes are logged and counted. */
  readonly sink: SqsRecordLogger;
  private readonly pipeline: SqsRecordPipeline;

  constructor(
    private readonly explorer: SqsHandlerExplorer,
    @Optional() @Inject(SQS_MODULE_OPTIONS) private readonly moduleOptions: SqsModuleOptions = {},
    @Optional() @Inject(RECORD_OBSERVER) observer?: RecordObserver,
  ) {
    this.sink = new SqsRecordLogger(moduleOptions.recordLog, observer);
    this.pipeline = new SqsRecordPipeline(this.sink);
  }

  /** Refuses unusable options and clashing declarations at start-up, and names unvalidated event classes. */
  onModuleInit(): void {
    this.assertUsable();
    this.warnAboutUnvalidatedEvents();
    this.warnAboutFallbacksBesideOneClass();
  }

  /** A fallback beside a queue's one event class silently narrows what the class receives; said once. */
  private warnAboutFallbacksBesideOneClass(): void {
    const names = [UNBOUND_QUEUE, ...(this.moduleOptions.queues ?? []).map((queue) => queue.name)];
    for (const name of new Set(names)) {
      const found = this.queue(name).router.oneClassBesideFallback;
      if (found === undefined) continue;
      const queue = name === UNBOUND_QUEUE ? 'every queue' : `queue "${name}"`;
      new Logger('SqsModule').warn(
        `On ${queue}, ${found.eventClass} is the one event class beside the fallback handler ${found.fallback}: ` +
          `it receives only bodies whose type is "${found.eventType}", and every other body (another type, or none) ` +
          `goes to the fallback. If its producers send no such type, set discriminator: { field: 'type' } to say ` +
          'routing by type is meant, or remove the fallback so the class takes every message.',
      );
    }
  }

  /** Builds every queue's router (with a host's `overrides`), throwing what would fail every batch. */
  assertUsable(overrides?: SqsDispatchOptions): void {
    this.queue(UNBOUND_QUEUE, overrides);
    for (const queue of this.moduleOptions.queues ?? []) this.queue(queue.name, overrides);
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
      new Logger('SqsModule').warn(
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
      queue = resolveQueue(name, isFifoQueue(name, declared), options, router);
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
