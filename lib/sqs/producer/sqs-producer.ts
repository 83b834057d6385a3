import { Inject, Injectable, OnApplicationShutdown, OnModuleInit, Optional } from '@nestjs/common';
import { IDEMPOTENCY_MODULE_OPTIONS } from '../../idempotency/idempotency.constants';
import type { ResolvedIdempotencyOptions } from '../../idempotency/idempotency-options.interface';
import { IdempotentHandlerRegistry } from '../../idempotency/idempotent-handler.registry';
import { SqsQueueRegistry } from '../nest/sqs-queue.registry';
import { SQS_MODULE_OPTIONS } from '../sqs.constants';
import type { SqsModuleOptions } from '../sqs-module-options.interface';
import type { SqsProducerEngine } from './sqs-producer.engine';
import type { SnsPublishOptions, SqsSendOptions, SqsSentMessage } from './sqs-producer.options';

/**
 * Sends event class instances to queues and SNS topics, validated and written as the app's own
 * consumers read them. Entries the service failed are retried with backoff; what is left is an
 * `SqsSendError`. A FIFO send's deduplication id is the event's idempotency key, so a retried send is
 * dropped by SQS, or later by `@Idempotent()`. Its engine loads on the first send: an app that never
 * sends never loads it.
 *
 * @example
 * ```ts
 * await this.producer.send('orders', Object.assign(new OrderCreated(), { id: 'evt-1', orderId: 'o-1' }));
 * ```
 */
@Injectable()
export class SqsProducer implements OnModuleInit, OnApplicationShutdown {
  private engine: Promise<SqsProducerEngine> | undefined;

  constructor(
    private readonly queueRegistry: SqsQueueRegistry,
    @Optional() @Inject(SQS_MODULE_OPTIONS) private readonly moduleOptions: SqsModuleOptions = {},
    @Optional() private readonly registry?: IdempotentHandlerRegistry,
    @Optional() @Inject(IDEMPOTENCY_MODULE_OPTIONS) private readonly idempotency?: ResolvedIdempotencyOptions,
  ) {}

  /** Where `producer` options are set, loads the engine now: options it refuses stop the start. */
  async onModuleInit(): Promise<void> {
    if (this.moduleOptions.producer !== undefined) await this.load();
  }

  /** Sends one event; throws `SqsSendError` when it could not be sent. */
  async send<T extends object>(
    queue: string,
    event: T,
    options: SqsSendOptions<T> = {},
  ): Promise<SqsSentMessage<T>> {
    const [sent] = await this.sendBatch(queue, [event], options);
    return sent;
  }

  /** Sends events to a queue in order; rejects with `SqsSendError` when some could not be sent. */
  async sendBatch<T extends object>(
    queue: string,
    events: readonly T[],
    options: SqsSendOptions<T> = {},
  ): Promise<SqsSentMessage<T>[]> {
    return events.length === 0 ? [] : (await this.load()).sendBatch(queue, events, options);
  }

  /** Publishes one event to an SNS topic; throws `SqsSendError` when it could not be published. */
  async publish<T extends object>(
    topicArn: string,
    event: T,
    options: SnsPublishOptions<T> = {},
  ): Promise<SqsSentMessage<T>> {
    const [sent] = await this.publishBatch(topicArn, [event], options);
    return sent;
  }

  /** Publishes events to an SNS topic, the event type where the default discriminator reads it. */
  async publishBatch<T extends object>(
    topicArn: string,
    events: readonly T[],
    options: SnsPublishOptions<T> = {},
  ): Promise<SqsSentMessage<T>[]> {
    return events.length === 0 ? [] : (await this.load()).publishBatch(topicArn, events, options);
  }

  async onApplicationShutdown(): Promise<void> {
    // An engine that failed to load has nothing to close (its error went to the send or the start).
    (await this.engine?.catch(() => undefined))?.close();
  }

  private load(): Promise<SqsProducerEngine> {
    this.engine ??= import('./sqs-producer.engine').then(
      ({ SqsProducerEngine }) =>
        new SqsProducerEngine(this.queueRegistry, this.moduleOptions, this.registry, this.idempotency),
    );
    return this.engine;
  }
}
