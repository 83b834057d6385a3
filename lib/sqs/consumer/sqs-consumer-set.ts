import { Logger } from '@nestjs/common';
import type { SqsBatchDispatcher } from '../pipeline/sqs-record.pipeline';
import type { SqsConsumerOptions, SqsModuleOptions, SqsQueueOptions } from '../sqs-module-options.interface';
import { SqsClientFactory } from '../sdk/sqs-client.factory';
import { loadSqsConsumer, loadSqsSdk } from '../sdk/sqs-peers';
import type { SqsConsumerEventListener, SqsConsumerListener } from './sqs-consumer-event.decorator';
import { SqsQueueConsumer } from './sqs-queue.consumer';
import { SqsConfigurationError } from '../../common/sqs-idempotency.error';
import { CONSUMER_OPTION_SHAPE } from '../sqs-options.reader';

/** Default of `shutdownTimeoutMs`: below the 30 s SIGTERM-to-SIGKILL grace of ECS and Kubernetes. */
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 25_000;

/** One queue to poll: its declaration (its client and consumer options over the host's). */
export interface SqsConsumerSetQueue {
  readonly queue: SqsQueueOptions & { readonly url: string };
  /** Listeners of this queue alone (`@SqsConsumerEventHandler('orders', ...)`). */
  readonly listeners?: readonly SqsConsumerEventListener[];
}

interface SqsConsumerSetSettings {
  /** Names the host in start-up errors. */
  readonly host: 'SqsModule' | 'SqsServer';
  /** Where every consumer hands its batches: the record pipeline of the host. */
  readonly dispatcher: SqsBatchDispatcher;
  /** The host's options: every queue's default client and consumer options, `shutdownTimeoutMs`, `failFastOnStartup`. */
  readonly options: SqsModuleOptions;
}

/**
 * The consumers of a polling host (`SqsConsumerManager` or `SqsServer`): one per queue, each batch to
 * the record pipeline, isolated listeners, a bounded stop. What queues and when stays in the hosts.
 */
export class SqsConsumerSet {
  private readonly consumers = new Map<string, SqsQueueConsumer>();
  private readonly clients = new SqsClientFactory();
  /** Listeners of every queue, present and future (`SqsServer.on()`). */
  private readonly everyQueueListeners: SqsConsumerListener[] = [];

  constructor(private readonly settings: SqsConsumerSetSettings) {}

  /** One consumer per queue, none polling yet; all or nothing (the clients built so far are destroyed). */
  async create(queues: Iterable<SqsConsumerSetQueue>): Promise<void> {
    try {
      const { host, options, dispatcher } = this.settings;
      // The SDK first: sqs-consumer needs it too, so an app missing both is told to install it first.
      await loadSqsSdk();
      const { Consumer } = await loadSqsConsumer();
      for (const { queue, listeners = [] } of queues) {
        const consumer = new SqsQueueConsumer({
          Consumer,
          host,
          queue: queue.name,
          url: queue.url,
          client: await this.clients.clientFor(queue.client ?? options.client),
          options: resolveConsumerOptions(options, queue),
          dispatcher,
          listeners: [...listeners, ...this.everyQueueListeners],
        });
        this.consumers.set(queue.name, consumer);
      }
    } catch (error) {
      this.discard();
      throw error;
    }
  }

  /**
   * Starts polling every queue; with `failFastOnStartup`, first one GetQueueAttributes per queue, and
   * on a problem throws one error naming each (having discarded the consumers) instead.
   */
  async open(): Promise<void> {
    const { options, host } = this.settings;
    const checks = options.failFastOnStartup ? [...this.consumers.values()].map((c) => c.queueProblem()) : [];
    const problems = (await Promise.all(checks)).filter((problem) => problem !== undefined);
    if (problems.length > 0) {
      this.discard();
      throw new SqsConfigurationError(
        `${host} cannot start (failFastOnStartup):\n- ${problems.join('\n- ')}\n` +
          'Fix the queue URLs or the client (region, credentials, endpoint); or drop failFastOnStartup to start ' +
          'anyway and keep polling until the queues answer.',
      );
    }
    this.start();
  }

  /** Starts polling the queues named, or every queue. */
  start(names?: readonly string[]): void {
    for (const consumer of this.select(names)) consumer.start();
  }

  /**
   * Stops polling (these queues, or all) and waits for their batches in flight, at most the shutdown
   * timeout; says so first, so an operator reading a slow shutdown sees what it waits for.
   */
  async stop(names?: readonly string[]): Promise<void> {
    const timeout = this.settings.options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
    const stopping = this.select(names).filter((consumer) => consumer.isRunning);
    if (stopping.length > 0) {
      const queues = stopping.map((consumer) => `"${consumer.queue}"`).join(', ');
      const inFlight = stopping.reduce((sum, consumer) => sum + consumer.inFlightCount, 0);
      new Logger('SqsConsumer').log(
        `Draining ${stopping.length === 1 ? 'queue' : 'queues'} ${queues}: polling stops, ` +
          (inFlight === 0
            ? 'nothing in flight.'
            : `${inFlight} message(s) in flight awaited for at most ${timeout} ms (shutdownTimeoutMs).`),
      );
    }
    await Promise.all(stopping.map((consumer) => consumer.stop(timeout)));
  }

  /** Stops every queue (as `stop()`), then destroys the clients the set built. */
  async close(): Promise<void> {
    await this.stop();
    this.clients.destroy();
  }

  /** Forgets every consumer (none may be polling) and destroys the clients the set built. */
  private discard(): void {
    this.consumers.clear();
    this.clients.destroy();
  }

  /** Attaches a listener to every queue's consumer, those built already and those built later. */
  listenOnEveryQueue(listener: SqsConsumerListener): void {
    this.everyQueueListeners.push(listener);
    for (const consumer of this.consumers.values())
      consumer.sqsConsumer.on(listener.event, listener.listener);
  }

  /** The consumers by queue name, in the order the queues were given. */
  get byName(): ReadonlyMap<string, SqsQueueConsumer> {
    return this.consumers;
  }

  private select(names: readonly string[] | undefined): SqsQueueConsumer[] {
    if (names === undefined) return [...this.consumers.values()];
    return names.flatMap((name) => this.consumers.get(name) ?? []);
  }
}

const CONSUMER_OPTIONS = Object.keys(CONSUMER_OPTION_SHAPE) as Array<keyof SqsConsumerOptions>;

/** Batch mode reads up to the SQS maximum per receive, as a Lambda event source mapping does. */
const DEFAULTS: SqsConsumerOptions = { batchSize: 10 };

/** A queue's consumer options: the defaults, then the module's, then the queue's own. */
function resolveConsumerOptions(moduleOptions: SqsModuleOptions, queue: SqsQueueOptions): SqsConsumerOptions {
  const resolved: Record<string, unknown> = { ...DEFAULTS };
  for (const layer of [moduleOptions, queue]) {
    for (const key of CONSUMER_OPTIONS) {
      if (layer[key] !== undefined) resolved[key] = layer[key];
    }
  }
  return resolved;
}
