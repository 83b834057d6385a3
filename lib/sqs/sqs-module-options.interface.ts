import type { SqsSdkMessage } from './sqs-record.interface';
import type { SqsBodyDecoder } from './decoding/body-decoder';
import type { SqsEnvelopeOption } from './decoding/envelope.interface';
import type { SqsContext } from './sqs-context';
import type { SqsValidationOptions } from './sqs-message.decoder';

/**
 * What a failure in a FIFO batch does to the records after it:
 * - `isolate_groups` (default): the rest of the failed record's `MessageGroupId` is failed unattempted;
 *   other groups go on;
 * - `halt_batch`: every later record of the batch is failed unattempted (records run one by one).
 */
export type FifoFailureMode = 'isolate_groups' | 'halt_batch';

/**
 * Where the event type of a message is read:
 * - `{ field: 'type' }` (default): a body field, dot paths allowed (`'detail-type'`, `'meta.type'`);
 * - `{ attribute: 'eventType' }`: a message attribute's string value;
 * - a function of the parsed body and the context.
 */
export type SqsDiscriminator =
  | { field: string }
  | { attribute: string }
  | ((payload: Record<string, unknown>, context: SqsContext) => string | undefined);

/** How records are routed, decoded and batched. Set on `SqsModule`, a queue, or the Lambda handler. */
export interface SqsDispatchOptions {
  /**
   * Where the event type is read. Default: the type an envelope names (EventBridge `detail-type`,
   * CloudEvents `type`), else the body field `type`; a queue with one event class needs none (it
   * takes every message, unless a discriminator is configured or a fallback handler is there).
   */
  discriminator?: SqsDiscriminator;
  /**
   * How message text becomes the payload: `'json'` (default), `'text'`, `'base64'`, `'base64-text'`
   * or a function. An event class may have its own (`@SqsEvent('x', { decoder })`).
   */
  decoder?: SqsBodyDecoder;
  /**
   * The envelope messages come in: `'none'` (default, raw messages), `'sns'`, `'eventbridge'`, `'s3'`,
   * `'cloudevents'`, a list outermost first (`['sns', 's3']`), or `'auto'` (see `SqsEnvelopeOption`).
   */
  envelope?: SqsEnvelopeOption;
  /** Records (standard queues) or groups (FIFO) handled at once. Default 10. */
  concurrency?: number;
  /** FIFO failure handling. Default `'isolate_groups'`. */
  fifoFailureMode?: FifoFailureMode;
  /** Body decoding and validation. */
  validation?: SqsValidationOptions;
}

/**
 * How the polling host receives a queue: `sqs-consumer` options. Set them on `SqsModule.forRoot()`
 * (defaults for every queue) or on a queue. Ignored by the Lambda host. Every queue is consumed in
 * batch mode and its records are acked by being returned to sqs-consumer (exactly those that did
 * not fail), so `shouldDeleteMessages` (a success would never be deleted and come back) and
 * `alwaysAcknowledge` (a failure would be deleted and lost) are not offered. sqs-consumer applies
 * `terminateVisibilityTimeout` and `handleMessageTimeout` only outside batch mode, or when a batch
 * handler throws (this one never does): the module implements them per record instead.
 */
export interface SqsConsumerOptions {
  /** Messages per receive, 1 to 10. Default 10 (one batch runs under the batch rules). */
  batchSize?: number;
  /** Seconds a received message stays hidden; default: the queue's own visibility timeout. */
  visibilityTimeout?: number;
  /** Long-poll seconds per receive, 1 to 20. Default 20. */
  waitTimeSeconds?: number;
  /**
   * Seconds between visibility extensions of a batch in flight (must be below `visibilityTimeout`);
   * keeps slow handlers' messages hidden. Default: none.
   */
  heartbeatInterval?: number;
  /** Milliseconds between receives. Default 0. */
  pollingWaitTimeMs?: number;
  /**
   * sqs-consumer's own wait, on stop, for the last poll (it only delays its `stopped` event). The
   * module waits for in-flight batches itself, bounded by `shutdownTimeoutMs`. Default 0.
   */
  pollingCompleteWaitTimeMs?: number;
  /** Milliseconds sqs-consumer pauses after a credentials, 403 or throttling error. Default 10 000. */
  authenticationErrorTimeout?: number;
  /** Attach AWS response details to the errors sqs-consumer emits. Default `false`. */
  extendedAWSErrors?: boolean;
  /**
   * When a batch is done, make its failed and invalid messages visible again after this many
   * seconds instead of their visibility timeout: `true` for at once (0), a number, or a function of
   * the SDK message, e.g. a retry backoff by receive count:
   * `(message) => Math.min(900, 2 ** Number(message.Attributes?.ApproximateReceiveCount ?? 1))`.
   * In-flight duplicates keep their timeout: coming back sooner would only meet the claim again.
   * Default: none (the queue's visibility timeout).
   */
  terminateVisibilityTimeout?: boolean | number | ((message: SqsSdkMessage) => number);
  /**
   * Milliseconds a record may run before it fails (status `FAILED`, emitted as `timeout_error`)
   * and comes back after its visibility timeout. Its handler is not stopped (JavaScript cannot
   * stop it); an `@Idempotent()` claim holds the key until it ends, so the redelivery meets it as
   * in flight, never running twice at once. In FIFO queues a timeout fails the records after it as
   * any failure does. Default: none.
   */
  handleMessageTimeout?: number;
}

/**
 * The SQS client of the polling host: an `SQSClient` you built (the module never destroys it), or
 * its configuration (the module builds the client and destroys it on shutdown). Give an explicit
 * `endpoint` for emulators (fauxqs, LocalStack): it is always used, whatever host the queue URL names.
 */
export type SqsClientOption = SqsClientLike | SqsClientConfigLike;

/**
 * What the module calls on an `SQSClient` of `@aws-sdk/client-sqs`. Declared structurally, so the
 * package's types compile in apps that do not install the SDK (Lambda-only apps).
 */
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
   * The queue URL: the polling host consumes every queue that has one. A queue without the `url`
   * key only carries dispatch options (Lambda, tests). One whose `url` is given but empty (an unset
   * environment variable) is not polled and is logged once as such; with `autoStart: true` set
   * explicitly it stops the app instead.
   */
  url?: string;
  /** FIFO queue; default: the name or URL ends with `.fifo`. */
  fifo?: boolean;
  /** The client for this queue; default: the module's `client`. */
  client?: SqsClientOption;
  /**
   * `false`: the app only sends to this queue (`SqsProducer`) and never polls it, although it has a
   * `url` (polled, a queue without handlers would fail every message to its dead-letter queue).
   * Default `true`.
   */
  consume?: boolean;
}

/** The per-record log line. */
export interface SqsRecordLogOptions {
  /**
   * `'text'` (default): one `key=value` line, readable in a terminal;
   * `'json'`: the fields as an object, for JSON loggers (`new ConsoleLogger({ json: true })`, pino).
   */
  format?: 'text' | 'json';
  /** Log a hash of the idempotency key instead of the key, when keys may carry personal data. */
  hashKeys?: boolean;
}

/** Options of `SqsModule.forRoot()`. Dispatch and consumer options here are defaults for every queue. */
export interface SqsModuleOptions extends SqsDispatchOptions, SqsConsumerOptions {
  queues?: SqsQueueOptions[];
  /** The SQS client of every queue (unless a queue has its own). Default: `new SQSClient({})`. */
  client?: SqsClientOption;
  /**
   * Start polling on application bootstrap. Default: poll every queue that has a `url` (a queue
   * whose `url` is empty, an unset environment variable, is logged and not polled); `true`: the
   * same, but a queue with an empty `url` stops the app; `false`: poll nothing until
   * `SqsConsumerManager.start()` (API-only processes). Never polls in a Lambda handler.
   */
  autoStart?: boolean;
  /**
   * Check every polled queue when the app starts (one `GetQueueAttributes` call each, which needs
   * `sqs:GetQueueAttributes`): a queue that does not exist, or that the client cannot reach, stops
   * the start-up with an error naming it and its URL. Default `false`: the app starts, a missing
   * queue is logged once and polling retries until it appears. Pick `true` where a deployment
   * should roll back rather than run without its queues.
   */
  failFastOnStartup?: boolean;
  /**
   * On shutdown, how long to wait for in-flight batches to finish and be acked before the app's
   * providers are destroyed. Default 25 000 (below the 30 s grace period of ECS and Kubernetes).
   */
  shutdownTimeoutMs?: number;
  /** The per-record log line; `false` turns it off. */
  recordLog?: SqsRecordLogOptions | false;
  /** `SqsProducer`: validation before sending, retries, the SNS client of `publish()`. */
  producer?: SqsProducerOptions;
}

/** Dispatch options with every default applied. */
export interface ResolvedSqsDispatchOptions {
  discriminator: SqsDiscriminator;
  /** Whether a layer set `discriminator` (else it is the default, `{ field: 'type' }`). */
  discriminatorConfigured: boolean;
  concurrency: number;
  fifoFailureMode: FifoFailureMode;
  validation: SqsValidationOptions;
  decoder?: SqsBodyDecoder;
  envelope?: SqsEnvelopeOption;
}

export const SQS_DISPATCH_DEFAULTS: ResolvedSqsDispatchOptions = {
  discriminator: { field: 'type' },
  discriminatorConfigured: false,
  concurrency: 10,
  fifoFailureMode: 'isolate_groups',
  validation: {},
};

/**
 * Options of `SqsProducer` (`SqsModule.forRoot({ producer })`). It sends with the SQS client of
 * the queue (its own `client`, else the module's).
 */
export interface SqsProducerOptions {
  /** Validate each event with class-validator before sending anything. Default `true`. */
  validate?: boolean;
  /**
   * Attempts per message, the first included, for entries SQS or SNS failed on their side
   * (throttling, an internal error: `SenderFault: false`). Entries refused as invalid
   * (`SenderFault: true`) are never retried. Default 3.
   */
  maxAttempts?: number;
  /** First pause between attempts, doubled each time, with full jitter. Default 100 ms. */
  retryDelayMs?: number;
  /**
   * The SNS client of `publish()`: an `SNSClient` of `@aws-sdk/client-sns` (never destroyed by the
   * module) or its configuration (built on first use, destroyed on shutdown).
   * Default: `new SNSClient({})`.
   */
  snsClient?: SnsClientLike | { region?: unknown; endpoint?: unknown; credentials?: unknown };
  /** `source` of the CloudEvents it writes to queues that take CloudEvents. Default `'nestjs-idempotent-sqs'`. */
  cloudEventsSource?: string;
}

/** An `SNSClient` of `@aws-sdk/client-sns`, structurally. */
export type SnsClientLike = SqsClientLike;
