import type { ClassTransformOptions } from 'class-transformer';
import type { ValidatorOptions } from 'class-validator';
import type { SqsSdkMessage } from './sqs-record.interface';
import type { SqsBodyDecoder } from './sqs-body.decoder';
import type { SqsEnvelopeOption } from './sqs-envelope.interface';
import type { SqsContext } from './sqs-context';

/** How bodies become events. */
export interface SqsValidationOptions {
  /** Run class-validator on the event (default `true`). */
  validate?: boolean;
  /** class-transformer options for `plainToInstance`. */
  transformOptions?: ClassTransformOptions;
  /** class-validator options (default `forbidUnknownValues: false`, so classes without decorators pass). */
  validatorOptions?: ValidatorOptions;
}

/**
 * What a FIFO failure does to the records after it: `isolate_groups` (default) fails the rest of its
 * group unattempted; `halt_batch` fails every later record of the batch.
 */
export type FifoFailureMode = 'isolate_groups' | 'halt_batch';

/** Where a message's event type is read: a body field (dot path; default `type`), a message attribute, or a function. */
export type SqsDiscriminator =
  | { field: string }
  | { attribute: string }
  | ((payload: Record<string, unknown>, context: SqsContext) => string | undefined);

/** How records are routed, decoded and batched. Set on `SqsModule`, a queue, or the Lambda handler. */
export interface SqsDispatchOptions {
  /**
   * Where the event type is read. Default: the type an envelope names, else the body field `type`; a
   * queue with one event class needs none.
   */
  discriminator?: SqsDiscriminator;
  /** How message text becomes the payload (`'json'` default, `'text'`, `'base64'`, `'base64-text'`, a function). */
  decoder?: SqsBodyDecoder;
  /** The envelope messages come in (`'none'` default, `'sns'`, `'eventbridge'`, `'s3'`, `'cloudevents'`, a list, `'auto'`). */
  envelope?: SqsEnvelopeOption;
  /** Records (standard queues) or groups (FIFO) handled at once. Default 10. */
  concurrency?: number;
  /** FIFO failure handling. Default `'isolate_groups'`. */
  fifoFailureMode?: FifoFailureMode;
  /** Body decoding and validation. */
  validation?: SqsValidationOptions;
}

/**
 * The polling host's `sqs-consumer` options, for every queue or one. Batches are acked by returning
 * the records that did not fail, so `shouldDeleteMessages` and `alwaysAcknowledge` (which would lose
 * or redeliver them) are not offered; visibility and timeouts are applied per record.
 */
export interface SqsConsumerOptions {
  /** Messages per receive, 1 to 10. Default 10 (one batch runs under the batch rules). */
  batchSize?: number;
  /** Seconds a received message stays hidden; default: the queue's own visibility timeout. */
  visibilityTimeout?: number;
  /** Long-poll seconds per receive, 1 to 20. Default 20. */
  waitTimeSeconds?: number;
  /** Seconds between visibility extensions of a batch in flight (below `visibilityTimeout`). Default: none. */
  heartbeatInterval?: number;
  /** Milliseconds between receives. Default 0. */
  pollingWaitTimeMs?: number;
  /** sqs-consumer's own wait for its last poll on stop (in-flight batches are awaited apart). Default 0. */
  pollingCompleteWaitTimeMs?: number;
  /** Milliseconds sqs-consumer pauses after a credentials, 403 or throttling error. Default 10 000. */
  authenticationErrorTimeout?: number;
  /** Attach AWS response details to the errors sqs-consumer emits. Default `false`. */
  extendedAWSErrors?: boolean;
  /**
   * Make failed and invalid messages visible again after this many seconds (`true`: at once; or a
   * function of the SDK message, for a backoff) instead of their visibility timeout. Default: none.
   */
  terminateVisibilityTimeout?: boolean | number | ((message: SqsSdkMessage) => number);
  /**
   * Milliseconds a record may run before it fails (`timeout_error`); its handler runs on, and its
   * claim keeps a redelivery from running it twice at once. Default: none.
   */
  handleMessageTimeout?: number;
}

/**
 * The polling host's SQS client: an `SQSClient` (never destroyed by the module) or its configuration
 * (built and destroyed by the module). An explicit `endpoint` (emulators) is always used.
 */
export type SqsClientOption = SqsClientLike | SqsClientConfigLike;

/** What the module calls on an `SQSClient`, structurally, so apps without the SDK compile. */
export interface SqsClientLike {
  send(command: any, options?: any): Promise<any>;
  destroy(): void;
}

/** An `SQSClientConfig` of `@aws-sdk/client-sqs` (`region`, `endpoint`, `credentials`, ...), structurally. */
export interface SqsClientConfigLike {
  region?: unknown;
  endpoint?: unknown;
  credentials?: unknown;
  maxAttempts?: unknown;
  requestHandler?: unknown;
}

/** One queue the app consumes. */
export interface SqsQueueOptions extends SqsDispatchOptions, SqsConsumerOptions {
  /** The name handlers bind to with `@SqsMessageHandler(Event, { queue })`. */
  name: string;
  /**
   * The queue URL: every queue with one is polled. An empty one (an unset variable) is logged and not
   * polled, or stops the app with `autoStart: true`.
   */
  url?: string;
  /** FIFO queue; default: the name or URL ends with `.fifo`. */
  fifo?: boolean;
  /** The client for this queue; default: the module's `client`. */
  client?: SqsClientOption;
  /** `false`: only sent to (`SqsProducer`), never polled. Default `true`. */
  consume?: boolean;
}

/** The per-record log line. */
export interface SqsRecordLogOptions {
  /** `'text'` (default): one `key=value` line; `'json'`: an object, for JSON loggers. */
  format?: 'text' | 'json';
  /** Log a hash of the idempotency key instead of the key, when keys may carry personal data. */
  hashKeys?: boolean;
}

/**
 * The span of each record (docs/tracing.md). Spans are made only where `@opentelemetry/api` is
 * installed and an SDK has registered a tracer provider before the app starts.
 */
export interface SqsTracingOptions {
  /**
   * The parent of a record's span: `'ambient'` (default, as the messaging conventions advise) the span
   * current when the record runs (a Lambda invocation's), with the producer's context as a link;
   * `'producer'` the context the message was sent in, with the ambient span as a link.
   */
  parent?: 'ambient' | 'producer';
  /** Put the idempotency key itself on the span (`idempotent_sqs.key`); default: its hash (`idempotent_sqs.key_hash`). */
  recordKeys?: boolean;
}

/** Options of `SqsModule.forRoot()`. Dispatch and consumer options here are defaults for every queue. */
export interface SqsModuleOptions extends SqsDispatchOptions, SqsConsumerOptions {
  queues?: SqsQueueOptions[];
  /** The SQS client of every queue (unless a queue has its own). Default: `new SQSClient({})`. */
  client?: SqsClientOption;
  /**
   * Poll on bootstrap: by default every queue with a `url`; `true` also stops the app on an empty
   * `url`; `false` waits for `SqsConsumerManager.start()`. Never in a Lambda handler.
   */
  autoStart?: boolean;
  /**
   * Check every polled queue at start-up (`sqs:GetQueueAttributes`): a missing or unreachable queue
   * stops the app. Default `false`: logged, and polling retries until it appears.
   */
  failFastOnStartup?: boolean;
  /** How long shutdown waits for in-flight batches. Default 25 000 (below ECS's and Kubernetes' 30 s grace). */
  shutdownTimeoutMs?: number;
  /** The per-record log line; `false` turns it off. */
  recordLog?: SqsRecordLogOptions | false;
  /** The span of each record (where an OpenTelemetry SDK is registered); `false` turns it off. */
  tracing?: SqsTracingOptions | false;
  /** `SqsProducer`: validation before sending, retries, the SNS client of `publish()`. */
  producer?: SqsProducerOptions;
}

/** Dispatch options with every default applied. */
export type ResolvedSqsDispatchOptions = SqsDispatchOptions &
  Required<Pick<SqsDispatchOptions, 'discriminator' | 'concurrency' | 'fifoFailureMode' | 'validation'>> & {
    /** Whether a layer set `discriminator` (else it is the default, `{ field: 'type' }`). */
    discriminatorConfigured: boolean;
  };

export const SQS_DISPATCH_DEFAULTS: ResolvedSqsDispatchOptions = {
  discriminator: { field: 'type' },
  discriminatorConfigured: false,
  concurrency: 10,
  fifoFailureMode: 'isolate_groups',
  validation: {},
};

/** Options of `SqsProducer` (`SqsModule.forRoot({ producer })`); it sends with its queue's client. */
export interface SqsProducerOptions {
  /** Validate each event with class-validator before sending anything. Default `true`. */
  validate?: boolean;
  /** Attempts per message, for entries SQS or SNS failed on their side (never those refused as invalid). Default 3. */
  maxAttempts?: number;
  /** First pause between attempts, doubled each time, with full jitter. Default 100 ms. */
  retryDelayMs?: number;
  /** The SNS client of `publish()`, or its configuration (built and destroyed by the module). Default: `new SNSClient({})`. */
  snsClient?: SnsClientLike | { region?: unknown; endpoint?: unknown; credentials?: unknown };
  /** `source` of the CloudEvents it writes to queues that take CloudEvents. Default `'nestjs-idempotent-sqs'`. */
  cloudEventsSource?: string;
}

/** An `SNSClient` of `@aws-sdk/client-sns`, structurally. */
export type SnsClientLike = SqsClientLike;
