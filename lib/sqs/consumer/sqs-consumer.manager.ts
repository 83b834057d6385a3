import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
  OnModuleInit,
  Optional,
} from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { SQS_LAMBDA_HOST, SQS_MODULE_OPTIONS } from '../sqs.constants';
import { runHooksAroundEveryOtherModule } from '../../common/nest-internals';
import { queueAliases, SqsQueueRegistry } from '../nest/sqs-queue.registry';
import { SqsHandlerExplorer } from '../nest/sqs-handler.explorer';
import type { SqsModuleOptions, SqsQueueOptions } from '../sqs-module-options.interface';
import { SqsConsumerEventExplorer } from './sqs-consumer-event.explorer';
import type { SqsConsumerSet, SqsConsumerSetQueue } from './sqs-consumer-set';
import { checkQueueBindings } from './sqs-queue-bindings';
import { SqsConfigurationError } from '../../common/sqs-idempotency.error';

/** What `getConsumer()` returns: an sqs-consumer `Consumer`, declared structurally (an optional peer). */
export interface SqsPollingConsumer {
  readonly status: { isRunning: boolean; isPolling: boolean };
  on(event: string, listener: (...args: any[]) => void): unknown;
  updateOption(option: any, value: any): void;
}

/**
 * The polling host: one sqs-consumer per queue with a `url`, checked and started after every other
 * module bootstrapped (never in a Lambda, nor with `autoStart: false`), and drained on shutdown
 * before any other module's `onModuleDestroy`. A queue whose `url` is empty is not polled, and said
 * so once. Inject it to start or stop consumers by hand.
 */
@Injectable()
export class SqsConsumerManager implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('SqsConsumer');
  /** Built at module init, only where the app polls (never in a Lambda handler). */
  private consumers?: SqsConsumerSet;

  constructor(
    private readonly registry: SqsQueueRegistry,
    private readonly handlerExplorer: SqsHandlerExplorer,
    private readonly eventExplorer: SqsConsumerEventExplorer,
    modules: ModulesContainer,
    @Optional() @Inject(SQS_MODULE_OPTIONS) private readonly options: SqsModuleOptions = {},
    @Optional() @Inject(SQS_LAMBDA_HOST) private readonly lambdaHost?: boolean,
  ) {
    if (!runHooksAroundEveryOtherModule(modules, SqsConsumerManager)) {
      this.logger.warn(
        "Could not order the consumers' shutdown before other modules; in-flight handlers may outlive providers.",
      );
    }
  }

  async onModuleInit(): Promise<void> {
    const queues = this.options.queues ?? [];
    const listeners = this.eventExplorer.explore();
    checkQueueBindings(queues, this.handlerExplorer.getHandlers(), listeners);
    if (this.lambdaHost) return;
    const polled: SqsConsumerSetQueue[] = [];
    for (const queue of queues) {
      if (!('url' in queue)) continue; // dispatch options only (tests, Lambda)
      if (queue.consume === false) continue; // sent to (SqsProducer), never polled here
      if (!queue.url) {
        // `url: process.env.X` with X unset: fine in a test module (SqsTestClient sends its records)
        // and worth a line in a service; an error only where polling was asked for in so many words.
        if (this.options.autoStart === true) throw this.noUrlError(queue);
        this.logger.warn(
          `Queue "${queue.name}" has no url (${JSON.stringify(queue.url)}), so it is not polled; its handlers ` +
            'still serve records sent by SqsTestClient or the Lambda host. Set its url to poll it (an unset ' +
            'environment variable?), or autoStart: true to refuse to start without it.',
        );
        continue;
      }
      const router = this.registry.queue(queue.name).router;
      if (router.eventTypes.length === 0 && !router.hasFallback) {
        this.logger.warn(
          `Queue "${queue.name}" has no handler: every message polled from it would fail as invalid and reach its ` +
            'dead-letter queue. Bind a handler to it, or set consume: false on it if this app only sends to it.',
        );
      }
      polled.push({
        queue: { ...queue, url: queue.url },
        listeners: listeners.filter((listener) => queueAliases(queue).includes(listener.queue)),
      });
    }
    const { SqsConsumerSet } = await import('./sqs-consumer-set');
    this.consumers = new SqsConsumerSet({
      host: 'SqsModule',
      dispatcher: this.registry,
      options: this.options,
    });
    await this.consumers.create(polled);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.options.autoStart === false || this.lambdaHost) return;
    await this.consumers?.open();
  }

  async onModuleDestroy(): Promise<void> {
    await this.consumers?.close();
  }

  /** Starts polling every queue, or the one named. Never in a Lambda handler. */
  start(queue?: string): void {
    if (this.lambdaHost) {
      throw new SqsConfigurationError(
        'SqsConsumerManager.start(): this app runs as a Lambda handler, which never polls.',
      );
    }
    this.consumers?.start(this.select(queue));
  }

  /** Stops polling (every queue, or the one named) and waits for the batches in flight, at most `shutdownTimeoutMs`. */
  async stop(queue?: string): Promise<void> {
    await this.consumers?.stop(this.select(queue));
  }

  /** Whether a queue's consumer is polling. */
  isRunning(queue: string): boolean {
    return this.consumers?.byName.get(queue)?.isRunning ?? false;
  }

  /** A queue's sqs-consumer `Consumer`, typed structurally (cast it to sqs-consumer's for the rest). */
  getConsumer(queue: string): SqsPollingConsumer | undefined {
    return this.consumers?.byName.get(queue)?.sqsConsumer;
  }

  /** Names of the queues this app polls (configured with a `url`). */
  get queues(): string[] {
    return [...(this.consumers?.byName.keys() ?? [])];
  }

  /** The queue named (every queue when none is); an error for a queue that is not polled. */
  private select(queue: string | undefined): string[] | undefined {
    if (queue === undefined) return undefined;
    if (this.consumers?.byName.has(queue)) return [queue];
    const declared = this.options.queues?.find((candidate) => candidate.name === queue);
    if (declared?.consume === false) {
      throw new SqsConfigurationError(
        `SqsConsumerManager: queue "${queue}" has consume: false (this app only sends to it), so it is not polled. ` +
          'Remove consume: false to poll it.',
      );
    }
    if (declared) throw this.noUrlError(declared);
    throw new SqsConfigurationError(
      `SqsConsumerManager: no queue "${queue}"; the queues polled are ${this.queues.map((q) => `"${q}"`).join(', ') || 'none'}.`,
    );
  }

  private noUrlError(queue: SqsQueueOptions): Error {
    return new SqsConfigurationError(
      `SqsModule: queue "${queue.name}" has no url (${JSON.stringify(queue.url)}), so it cannot be polled. ` +
        'Set its url (an unset environment variable?), or leave autoStart unset to start without polling it.',
    );
  }
}
