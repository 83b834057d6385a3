import { createHash } from 'node:crypto';
import { Inject, Injectable, OnApplicationShutdown, Optional } from '@nestjs/common';
import { validate } from 'class-validator';
import { IDEMPOTENCY_MODULE_OPTIONS } from '../../idempotency/idempotency.constants';
import { SQS_MODULE_OPTIONS } from '../sqs.constants';
import { parseKeyPath, readKeyPath, toIdempotencyKey } from '../../idempotency/idempotency-key';
import type { ResolvedIdempotencyOptions } from '../../idempotency/idempotency-options.interface';
import { IdempotentHandlerRegistry } from '../../idempotency/idempotent-handler.registry';
import { isSqsClient, SqsClientFactory } from '../sdk/sqs-client.factory';
import { resolveBodyDecoder } from '../sqs-body.decoder';
import { queueAliases, SqsQueueRegistry } from '../nest/sqs-queue.registry';
import { getSqsEventType } from '../sqs-event.decorator';
import { describeValidationErrors } from '../routing/sqs-event.validator';
import { loadSnsSdk, loadSqsSdk } from '../sdk/sqs-peers';
import { OutgoingEntry, SendBatch, sendInBatches } from './sqs-batch.sender';
import { encodeEvent, EncodingTarget, eventClassOf } from './sqs-event.encoder';
import { SqsProducerError, SqsSendError } from './sqs-producer.errors';
import type { SnsClientLike, SqsModuleOptions, SqsProducerOptions } from '../sqs-module-options.interface';
import type { SnsPublishOptions, SqsSendOptions, SqsSentMessage } from './sqs-producer.options';

/** SQS and SNS take deduplication ids of up to 128 of these characters. */
const DEDUPLICATION_ID = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;

/**
 * Sends event class instances to queues and SNS topics, validated and written as the app's own
 * consumers read them. Entries the service failed are retried with backoff; what is left is an
 * `SqsSendError`. A FIFO send's deduplication id is the event's idempotency key, so a retried send is
 * dropped by SQS, or later by `@Idempotent()`.
 *
 * @example
 * ```ts
 * await this.producer.send('orders', Object.assign(new OrderCreated(), { id: 'evt-1', orderId: 'o-1' }));
 * ```
 */
@Injectable()
export class SqsProducer implements OnApplicationShutdown {
  private readonly clients = new SqsClientFactory();
  private readonly options: SqsProducerOptions;
  private snsClient: Promise<SnsClientLike> | undefined;
  private snsClientOwned = false;

  constructor(
    private readonly queueRegistry: SqsQueueRegistry,
    @Optional() @Inject(SQS_MODULE_OPTIONS) private readonly moduleOptions: SqsModuleOptions = {},
    @Optional() private readonly registry?: IdempotentHandlerRegistry,
    @Optional() @Inject(IDEMPOTENCY_MODULE_OPTIONS) private readonly idempotency?: ResolvedIdempotencyOptions,
  ) {
    this.options = moduleOptions.producer ?? {};
    checkProducerOptions(this.options);
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
    if (events.length === 0) return [];
    const { url, declared, target, fifo } = this.queueTarget(queue);
    if (
      options.delaySeconds !== undefined &&
      !(Number.isInteger(options.delaySeconds) && options.delaySeconds >= 0 && options.delaySeconds <= 900)
    ) {
      throw new SqsProducerError(
        `SqsProducer (${target.description}): delaySeconds must be whole seconds from 0 to 900.`,
      );
    }
    if (!fifo && options.deduplicationId !== undefined) {
      throw new SqsProducerError(
        `SqsProducer (${target.description}): a deduplication id is for FIFO queues only; SQS refuses it on a standard queue.`,
      );
    }
    const delay = options.delaySeconds === undefined ? {} : { DelaySeconds: options.delaySeconds };
    const entries = await this.prepare(events, target, fifo, options, 'MessageBody', delay);
    const client = await this.clients.clientFor(declared?.client ?? this.moduleOptions.client);
    const { SendMessageBatchCommand } = await loadSqsSdk();
    return this.deliver(url, entries, (batch) =>
      client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: batch as never })),
    );
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
    if (events.length === 0) return [];
    if (typeof topicArn !== 'string' || !topicArn.startsWith('arn:')) {
      throw new SqsProducerError(
        `SqsProducer.publish: give the topic's ARN (arn:aws:sns:...), got ${JSON.stringify(topicArn)}.`,
      );
    }
    const target: EncodingTarget = {
      description: `topic ${topicArn}`,
      discriminator: this.moduleOptions.discriminator ?? { field: 'type' },
      carriesType: true,
      decoder: resolveBodyDecoder(this.moduleOptions.decoder, 'SqsModule'),
      cloudEvents: false,
      cloudEventsSource: this.cloudEventsSource,
      transformOptions: this.moduleOptions.validation?.transformOptions,
    };
    const fifo = topicArn.endsWith('.fifo');
    const subject = options.subject === undefined ? {} : { Subject: options.subject };
    const entries = await this.prepare(events, target, fifo, options, 'Message', subject);
    const client = await this.sns();
    const { PublishBatchCommand } = await loadSnsSdk();
    return this.deliver(topicArn, entries, (batch) =>
      client.send(
        new PublishBatchCommand({ TopicArn: topicArn, PublishBatchRequestEntries: batch as never }),
      ),
    );
  }

  onApplicationShutdown(): void {
    this.clients.destroy();
    if (this.snsClientOwned) void this.snsClient?.then((client) => client.destroy()).catch(() => undefined);
  }

  /** Validates every event, then writes each as an API entry; throws before anything is sent. */
  private async prepare<T extends object>(
    events: readonly T[],
    target: EncodingTarget,
    fifo: boolean,
    options: SqsSendOptions<T>,
    bodyField: 'MessageBody' | 'Message',
    extra: Record<string, unknown>,
  ): Promise<OutgoingEntry<T>[]> {
    if (this.options.validate !== false) await this.validateAll(events, target);
    return events.map((event, index) => {
      const key = this.keyOf(event);
      const encoded = encodeEvent(event, target, key, options.messageAttributes);
      const groupId = typeof options.groupId === 'function' ? options.groupId(event) : options.groupId;
      if (fifo && (typeof groupId !== 'string' || groupId.length === 0)) {
        throw new SqsProducerError(
          `SqsProducer (${target.description}): FIFO needs a group id for each message: ` +
            'pass { groupId: "..." } or { groupId: (event) => event.accountId }.',
        );
      }
      const deduplicationId = fifo ? this.deduplicationIdOf(event, key, options) : undefined;
      const entry: OutgoingEntry<T>['entry'] = { Id: String(index), [bodyField]: encoded.body, ...extra };
      if (Object.keys(encoded.attributes).length > 0) entry.MessageAttributes = encoded.attributes;
      if (groupId !== undefined) entry.MessageGroupId = groupId;
      if (deduplicationId !== undefined) entry.MessageDeduplicationId = deduplicationId;
      return { index, event, entry, size: encoded.size };
    });
  }

  /** Sends the entries (batches, retries); rejects with `SqsSendError` when some could not be sent. */
  private async deliver<T>(
    destination: string,
    entries: OutgoingEntry<T>[],
    send: SendBatch<T>,
  ): Promise<SqsSentMessage<T>[]> {
    const { sent, failed } = await sendInBatches(entries, send, {
      maxAttempts: this.options.maxAttempts ?? 3,
      retryDelayMs: this.options.retryDelayMs ?? 100,
    });
    if (failed.length > 0) throw new SqsSendError(destination, failed, sent);
    return sent;
  }

  private async validateAll(events: readonly object[], target: EncodingTarget): Promise<void> {
    const problems = await Promise.all(
      events.map(async (event, index) => {
        const eventClass = eventClassOf(event, `SqsProducer (${target.description})`);
        const errors = await validate(event, {
          forbidUnknownValues: false,
          ...this.moduleOptions.validation?.validatorOptions,
        });
        return errors.length > 0 ? [`#${index} ${eventClass.name}: ${describeValidationErrors(errors)}`] : [];
      }),
    );
    const found = problems.flat();
    if (found.length > 0) {
      throw new SqsProducerError(
        `SqsProducer (${target.description}): nothing was sent, ${found.length} event(s) fail validation ` +
          `(the consumer would refuse them): ${found.join('; ')}`,
      );
    }
  }

  /** The event's key as this app's consumer computes it (its handler's, the module's, else `id`). */
  private keyOf(event: object): string | undefined {
    try {
      const type = getSqsEventType(eventClassOf(event, 'SqsProducer'));
      const policy = this.registry?.policies().find((candidate) => candidate.eventType === type);
      if (policy !== undefined) return toIdempotencyKey(policy.resolveKey(event, undefined));
      if (this.idempotency?.key !== undefined)
        return toIdempotencyKey(this.idempotency.key(event, undefined));
      const path = parseKeyPath(this.idempotency?.keyPath ?? 'id');
      return typeof path === 'string' ? undefined : toIdempotencyKey(readKeyPath(event, path));
    } catch {
      // A key function that needs the message context cannot run before there is a message.
      return undefined;
    }
  }

  private deduplicationIdOf<T extends object>(
    event: T,
    key: string | undefined,
    options: SqsSendOptions<T>,
  ): string | undefined {
    const given =
      typeof options.deduplicationId === 'function'
        ? options.deduplicationId(event)
        : options.deduplicationId;
    const id = given ?? key;
    if (id === undefined) return undefined;
    return DEDUPLICATION_ID.test(id) ? id : createHash('sha256').update(id).digest('hex');
  }

  /** Where a queue named in a call is, how its consumer reads it, and whether it is FIFO. */
  private queueTarget(queue: string) {
    const byUrl = /^https?:\/\//.test(queue);
    const name = byUrl ? queue.slice(queue.lastIndexOf('/') + 1) : queue;
    const declared = this.moduleOptions.queues?.find(
      (candidate) => (byUrl && candidate.url === queue) || queueAliases(candidate).includes(name),
    );
    const url = byUrl ? queue : declared?.url;
    if (!url) {
      throw new SqsProducerError(
        declared === undefined
          ? `SqsProducer: no queue "${queue}" in SqsModule.forRoot({ queues }); configure it with its url, or send to its URL.`
          : `SqsProducer: queue "${queue}" has no url (${JSON.stringify(declared.url)}); set it (an unset environment variable?).`,
      );
    }
    const resolved = this.queueRegistry.queue(declared?.name ?? name);
    const envelopes = resolved.decoding.envelopes;
    const cloudEvents = envelopes !== 'auto' && envelopes.length === 1 && envelopes[0] === 'cloudevents';
    if (envelopes !== 'auto' && envelopes.length > 0 && !cloudEvents) {
      throw new SqsProducerError(
        `SqsProducer: queue "${resolved.name}" takes ${envelopes.join(' in ')} envelopes: its messages come from ` +
          `${envelopes[0] === 'sns' ? 'an SNS topic: publish() to the topic' : 'that service'}, not from a producer.`,
      );
    }
    return {
      url,
      declared,
      fifo: resolved.fifo || url.endsWith('.fifo'),
      target: {
        description: `queue "${resolved.name}"`,
        discriminator: resolved.options.discriminator,
        carriesType: !resolved.router.takesEveryMessage,
        decoder: resolved.decoding.defaultDecoder,
        cloudEvents,
        cloudEventsSource: this.cloudEventsSource,
        transformOptions: resolved.options.validation.transformOptions,
      } satisfies EncodingTarget,
    };
  }

  private get cloudEventsSource(): string {
    return this.options.cloudEventsSource ?? 'nestjs-idempotent-sqs';
  }

  private sns(): Promise<SnsClientLike> {
    this.snsClient ??= (async () => {
      const option = this.options.snsClient;
      if (isSqsClient(option as never)) return option as SnsClientLike;
      const { SNSClient } = await loadSnsSdk();
      this.snsClientOwned = true;
      return new SNSClient({ ...(option as object | undefined) }) as unknown as SnsClientLike;
    })();
    return this.snsClient;
  }
}

/** The ranges of the retry options (their kinds are checked with the module's options). */
function checkProducerOptions({ maxAttempts, retryDelayMs }: SqsProducerOptions): void {
  if (maxAttempts !== undefined && !(Number.isInteger(maxAttempts) && maxAttempts >= 1)) {
    throw new SqsProducerError(
      `SqsModule producer options: maxAttempts must be a whole number from 1, got ${String(maxAttempts)}.`,
    );
  }
  if (retryDelayMs !== undefined && !(retryDelayMs >= 0 && Number.isFinite(retryDelayMs))) {
    throw new SqsProducerError(
      `SqsModule producer options: retryDelayMs must be a number of milliseconds, got ${String(retryDelayMs)}.`,
    );
  }
}
