import { createHash } from 'node:crypto';
import { validate } from 'class-validator';
import { parseKeyPath, readKeyPath, toIdempotencyKey } from '../../idempotency/idempotency-key';
import type { ResolvedIdempotencyOptions } from '../../idempotency/idempotency-options.interface';
import type { IdempotentHandlerRegistry } from '../../idempotency/idempotent-handler.registry';
import { isSqsClient, SqsClientFactory } from '../sdk/sqs-client.factory';
import { resolveBodyDecoder } from '../sqs-body.decoder';
import { queueAliases, type SqsQueueRegistry } from '../nest/sqs-queue.registry';
import { getSqsEventType } from '../sqs-event.decorator';
import { describeValidationErrors } from '../routing/sqs-event.validator';
import { loadSnsSdk, loadSqsSdk } from '../sdk/sqs-peers';
import { OutgoingEntry, SendBatch, sendInBatches } from './sqs-batch.sender';
import { encodeEvent, EncodingTarget, eventClassOf } from './sqs-event.encoder';
import { SqsProducerError, SqsSendError } from './sqs-producer.errors';
import type { SnsClientLike, SqsModuleOptions, SqsProducerOptions } from '../sqs-module-options.interface';
import type { SnsPublishOptions, SqsSendOptions, SqsSentMessage } from './sqs-producer.options';
import { registeredTracerApi } from '../../common/tracer-provider.check';
import type { ProducerDestination, ProducerTracing } from './sqs-producer.tracing';

/** SQS and SNS take deduplication ids of up to 128 of these characters. */
const DEDUPLICATION_ID = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;

/**
 * What `SqsProducer` sends with, loaded on its first send (at start-up where `producer` options are
 * set, so bad ones stop the app): targets, validation, encoding, the batch sender and the clients.
 */
export class SqsProducerEngine {
  private readonly clients = new SqsClientFactory();
  private readonly options: SqsProducerOptions;
  private readonly retries: { maxAttempts: number; retryDelayMs: number };
  /** The SNS client this engine built, if any. */
  private snsClient: Promise<SnsClientLike> | undefined;
  /** The send spans and the context written into messages, where an SDK registered a tracer provider. */
  private tracing: Promise<ProducerTracing | undefined> | undefined;

  constructor(
    private readonly queueRegistry: SqsQueueRegistry,
    private readonly moduleOptions: SqsModuleOptions,
    private readonly registry: IdempotentHandlerRegistry | undefined,
    private readonly idempotency: ResolvedIdempotencyOptions | undefined,
  ) {
    this.options = moduleOptions.producer ?? {};
    const { maxAttempts = 3, retryDelayMs = 100 } = this.options;
    if (!(Number.isInteger(maxAttempts) && maxAttempts >= 1)) {
      throw new SqsProducerError(
        `SqsModule producer options: maxAttempts must be a whole number from 1, got ${String(maxAttempts)}.`,
      );
    }
    if (!(retryDelayMs >= 0 && Number.isFinite(retryDelayMs))) {
      throw new SqsProducerError(
        `SqsModule producer options: retryDelayMs must be a number of milliseconds, got ${String(retryDelayMs)}.`,
      );
    }
    this.retries = { maxAttempts, retryDelayMs };
  }

  async sendBatch<T extends object>(
    queue: string,
    events: readonly T[],
    options: SqsSendOptions<T>,
  ): Promise<SqsSentMessage<T>[]> {
    const { url, declared, target, fifo } = this.queueTarget(queue);
    const { delaySeconds: delay } = options;
    if (delay !== undefined && !(Number.isInteger(delay) && delay >= 0 && delay <= 900)) {
      throw new SqsProducerError(
        `SqsProducer (${target.description}): delaySeconds must be whole seconds from 0 to 900.`,
      );
    }
    if (!fifo && options.deduplicationId !== undefined) {
      throw new SqsProducerError(
        `SqsProducer (${target.description}): a deduplication id is for FIFO queues only; SQS refuses it on a standard queue.`,
      );
    }
    const extra = delay === undefined ? {} : { DelaySeconds: delay };
    const entries = await this.prepare(events, target, fifo, options, 'MessageBody', extra);
    const client = await this.clients.clientFor(declared?.client ?? this.moduleOptions.client);
    const { SendMessageBatchCommand } = await loadSqsSdk();
    // Named as its consumer names it (`process <name>`): the configured name, else the URL's.
    const name = declared?.name ?? url.slice(url.lastIndexOf('/') + 1);
    return this.deliver({ system: 'aws_sqs', name, address: url }, entries, (batch) =>
      client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: batch as never })),
    );
  }

  async publishBatch<T extends object>(
    topicArn: string,
    events: readonly T[],
    options: SnsPublishOptions<T>,
  ): Promise<SqsSentMessage<T>[]> {
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
    const extra = options.subject === undefined ? {} : { Subject: options.subject };
    const entries = await this.prepare(events, target, fifo, options, 'Message', extra);
    const client = await this.sns();
    const { PublishBatchCommand } = await loadSnsSdk();
    const name = topicArn.slice(topicArn.lastIndexOf(':') + 1);
    return this.deliver({ system: 'aws_sns', name, address: topicArn }, entries, (batch) =>
      client.send(
        new PublishBatchCommand({ TopicArn: topicArn, PublishBatchRequestEntries: batch as never }),
      ),
    );
  }

  /** Destroys the clients it built (their sockets would keep the process alive). */
  close(): void {
    this.clients.destroy();
    void this.snsClient?.then((client) => client.destroy()).catch(() => undefined);
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
      const groupId = valueFor(options.groupId, event);
      if (fifo && (typeof groupId !== 'string' || groupId.length === 0)) {
        throw new SqsProducerError(
          `SqsProducer (${target.description}): FIFO needs a group id for each message: ` +
            'pass { groupId: "..." } or { groupId: (event) => event.accountId }.',
        );
      }
      const entry: OutgoingEntry<T>['entry'] = { Id: String(index), [bodyField]: encoded.body, ...extra };
      if (Object.keys(encoded.attributes).length > 0) entry.MessageAttributes = encoded.attributes;
      if (groupId !== undefined) entry.MessageGroupId = groupId;
      // FIFO: the event's key unless the call gives one; hashed where SQS would refuse it.
      const deduplicationId = fifo ? (valueFor(options.deduplicationId, event) ?? key) : undefined;
      if (deduplicationId !== undefined) {
        entry.MessageDeduplicationId = DEDUPLICATION_ID.test(deduplicationId)
          ? deduplicationId
          : createHash('sha256').update(deduplicationId).digest('hex');
      }
      return { index, event, entry, size: encoded.size };
    });
  }

  /**
   * Sends the entries (batches, retries), traced where tracing is on; rejects with `SqsSendError`
   * when some could not be sent.
   */
  private async deliver<T>(
    destination: ProducerDestination,
    entries: OutgoingEntry<T>[],
    send: SendBatch<T>,
  ): Promise<SqsSentMessage<T>[]> {
    const deliver = async (ready: OutgoingEntry<T>[]) => {
      const { sent, failed } = await sendInBatches(ready, send, this.retries);
      if (failed.length > 0) throw new SqsSendError(destination.address, failed, sent);
      return sent;
    };
    const tracing = await (this.tracing ??= this.startTracing());
    return tracing === undefined ? deliver(entries) : tracing.send(destination, entries, deliver);
  }

  /** The producer's tracing, loaded only where `@opentelemetry/api` has a registered tracer provider. */
  private async startTracing(): Promise<ProducerTracing | undefined> {
    if (this.moduleOptions.tracing === false) return undefined;
    const api = await registeredTracerApi();
    return api && new (await import('./sqs-producer.tracing')).ProducerTracing(api);
  }

  private async validateAll(events: readonly object[], target: EncodingTarget): Promise<void> {
    const validatorOptions = {
      forbidUnknownValues: false,
      ...this.moduleOptions.validation?.validatorOptions,
    };
    const problems = await Promise.all(
      events.map(async (event, index) => {
        const eventClass = eventClassOf(event, `SqsProducer (${target.description})`);
        const errors = await validate(event, validatorOptions);
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

  /** The SNS client: the one given (never destroyed), else one built from its configuration. */
  private sns(): Promise<SnsClientLike> {
    const option = this.options.snsClient;
    if (isSqsClient(option as never)) return Promise.resolve(option as SnsClientLike);
    this.snsClient ??= loadSnsSdk().then(
      ({ SNSClient }) => new SNSClient({ ...(option as object | undefined) }) as unknown as SnsClientLike,
    );
    return this.snsClient;
  }
}

/** A per-call option given as a value, or as a function of the event. */
function valueFor<T>(option: string | ((event: T) => string) | undefined, event: T): string | undefined {
  return typeof option === 'function' ? option(event) : option;
}
