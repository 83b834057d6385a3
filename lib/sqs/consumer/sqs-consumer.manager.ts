import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
  OnModuleInit,
  Optional,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModulesContainer } from '@nestjs/core';
import { SQS_LAMBDA_HOST, SQS_MODULE_OPTIONS } from '../sqs.constants';
import { runHooksAroundEveryOtherModule } from '../../common/nest-internals';
import { SqsQueueRegistry } from '../nest/sqs-queue.registry';
import { SqsHandlerExplorer } from '../nest/sqs-handler.explorer';
import type { SqsModuleOptions } from '../sqs-module-options.interface';
import { consumerEventHandlersDeclared } from './sqs-consumer-event.decorator';
import type { SqsConsumerSet } from './sqs-consumer-set';
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
  /** Built at module init, only where the app polls (never in a Lambda handler): the machinery loads then. */
  private consumers?: SqsConsumerSet;
  /** `sqs-unpolled-queues.ts`, loaded at module init where a declared queue is not polled. */
  private unpolled?: typeof import('./sqs-unpolled-queues');

  constructor(
    private readonly registry: SqsQueueRegistry,
    private readonly handlerExplorer: SqsHandlerExplorer,
    private readonly discovery: DiscoveryService,
    private readonly metadataScanner: MetadataScanner,
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
    // A queue without the url key carries dispatch options only (tests, Lambda); consume: false is sent to only.
    const given = this.lambdaHost ? [] : queues.filter((queue) => 'url' in queue && queue.consume !== false);
    const polled = given.filter((queue) => queue.url);
    // The polling host loads only where a queue is polled, or listeners are declared (to be checked).
    const polling =
      polled.length > 0 || consumerEventHandlersDeclared() ? await import('./sqs-module.polling') : undefined;
    const listeners = polling?.findConsumerEventListeners(this.discovery, this.metadataScanner) ?? [];
    checkQueueBindings(queues, this.handlerExplorer.getHandlers(), listeners);
    // Why a declared queue is not polled (an empty url, consume: false) loads only where one is.
    if (
      !this.lambdaHost &&
      queues.some((queue) => 'url' in queue && !(queue.url && queue.consume !== false))
    ) {
      this.unpolled = await import('./sqs-unpolled-queues');
      this.unpolled.reportUnpolledQueues(given, this.options, this.logger);
    }
    if (polling && polled.length > 0) {
      this.consumers = await polling.createModuleConsumers(polled, listeners, this.registry, this.options);
    }
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
    throw (
      this.unpolled?.notPolledError(queue, this.options) ??
      new SqsConfigurationError(
        `SqsConsumerManager: queue "${queue}" is not polled; the queues polled are ${this.queues.map((q) => `"${q}"`).join(', ') || 'none'}.`,
      )
    );
  }
}
