import { Logger } from '@nestjs/common';
import type { Message, SQSClient } from '@aws-sdk/client-sqs';
import type { Consumer } from 'sqs-consumer';
import { loadSqsSdk } from '../sdk/sqs-peers';
import type { SqsBatchDispatcher } from '../pipeline/sqs-record.pipeline';
import type { SqsConsumerOptions } from '../sqs-module-options.interface';
import { SqsRecordTimeoutError } from '../sqs-message.errors';
import { isFailedStatus, needsAttention } from '../../idempotency/record-outcome';
import type { SqsConsumerListener } from './sqs-consumer-event.decorator';
import { toSqsRecord } from './sqs-message.mapper';
import { SqsReceiveBackoff } from './sqs-receive.backoff';
import { SqsConfigurationError } from '../../common/sqs-idempotency.error';

interface SqsQueueConsumerSettings {
  /** The host that polls it, as start-up errors name it. */
  host: 'SqsModule' | 'SqsServer';
  /** The queue's configured name (routing, logs). */
  queue: string;
  url: string;
  client: SQSClient;
  options: SqsConsumerOptions;
  /** What runs the batches: `SqsModule`'s queue registry, or the microservice transport (`SqsServer`). */
  dispatcher: SqsBatchDispatcher;
  listeners: readonly SqsConsumerListener[];
  /** sqs-consumer's class, loaded by the set on first use (so Lambda-only apps need not install it). */
  Consumer: typeof Consumer;
}

type VisibilityEntry = { Id: string; ReceiptHandle: string | undefined; VisibilityTimeout: number };

/** SQS takes visibility timeouts of whole seconds up to 12 hours. */
const MAX_VISIBILITY_S = 43_200;

/** How often a stopping consumer checks whether its last batch is done. */
const DRAIN_CHECK_MS = 10;

/**
 * Polls one queue with sqs-consumer in batch mode and hands each batch to the record pipeline. It
 * acks by returning the records that did not fail (sqs-consumer >= 14 deletes exactly those), always
 * has an `error` listener, backs off failed receives, applies `terminateVisibilityTimeout` and
 * `handleMessageTimeout` per record, and on stop drains the batch in flight (an idle long poll is
 * aborted; a busy one is not, as the abort would cancel the acks) and releases later messages.
 */
export class SqsQueueConsumer {
  private readonly logger = new Logger('SqsConsumer');
  private readonly backoff = new SqsReceiveBackoff();
  /** The sqs-consumer instance (its own events, `updateOption`, `status`). */
  readonly sqsConsumer: Consumer;
  /** Batches inside the handler: whether aborting is safe, what a timeout left behind. */
  private readonly inFlight = new Set<Message[]>();
  /** False once stopped: a batch still received is released, a failed receive is the aborted poll. */
  private running = false;
  /** A missing queue is explained once, at length; later failures get the short line. */
  private missingQueueReported = false;

  constructor(private readonly settings: SqsQueueConsumerSettings) {
    const { host, queue, url, client, listeners, Consumer } = settings;
    // The module applies these two itself (their kinds were read at start-up); sqs-consumer never sees them.
    const {
      terminateVisibilityTimeout: terminate,
      handleMessageTimeout: timeout,
      ...options
    } = settings.options;
    try {
      if (
        typeof terminate === 'number' &&
        !(Number.isInteger(terminate) && terminate >= 0 && terminate <= MAX_VISIBILITY_S)
      ) {
        throw new Error(
          `terminateVisibilityTimeout must be true, false, whole seconds from 0 to ${MAX_VISIBILITY_S}, ` +
            `or a function (message) => seconds; got ${terminate}.`,
        );
      }
      if (timeout !== undefined && !(Number.isFinite(timeout) && timeout > 0)) {
        throw new Error(`handleMessageTimeout must be a positive number of milliseconds; got ${timeout}.`);
      }
      this.sqsConsumer = Consumer.create({
        ...options,
        queueUrl: url,
        sqs: client,
        // Every attribute: the receive count, group id and dedup id reach SqsContext.
        attributeNames: ['All'],
        messageSystemAttributeNames: ['All'],
        messageAttributeNames: ['All'],
        // The FIFO warning is about handleMessage mode; in batch mode the batch rules keep group order.
        suppressFifoWarning: true,
        handleMessageBatch: (messages) => this.handleBatch(messages),
        preReceiveMessageCallback: () => this.backoff.wait(),
        postReceiveMessageCallback: async () => this.receiveSucceeded(),
      });
    } catch (error) {
      throw new SqsConfigurationError(`${host}: queue "${queue}": ${(error as Error).message}`);
    }
    this.sqsConsumer.on('error', (error, messages) => this.onError(error, messages));
    for (const { event, listener } of listeners) this.sqsConsumer.on(event, listener);
  }

  get queue(): string {
    return this.settings.queue;
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** The messages of the batches inside the handler now. */
  get inFlightCount(): number {
    return [...this.inFlight].flat().length;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.sqsConsumer.start();
    const { batchSize, visibilityTimeout } = this.settings.options;
    this.logger.log(
      `Consuming queue "${this.queue}" (batches of ${batchSize}` +
        `${visibilityTimeout === undefined ? '' : `, visibility ${visibilityTimeout} s`}).`,
    );
  }

  /** Stops polling and waits for the batch in flight, at most `timeoutMs` (a warning names what it left). */
  async stop(timeoutMs: number): Promise<void> {
    if (!this.running) return;
    this.running = false;
    const busy = this.inFlight.size > 0;
    this.backoff.interrupt();
    this.sqsConsumer.stop({ abort: !busy });
    const deadline = Date.now() + timeoutMs;
    while (this.sqsConsumer.status.isPolling && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, DRAIN_CHECK_MS));
    }
    if (!this.sqsConsumer.status.isPolling) {
      this.logger.log(`Stopped consuming queue "${this.queue}"${busy ? ' (in-flight batch finished)' : ''}.`);
    } else {
      const ids = [...this.inFlight].flat().map((message) => message.MessageId);
      this.logger.warn(
        `Queue "${this.queue}": ${ids.length} message(s) still in flight after ${timeoutMs} ms ` +
          `(${ids.join(', ')}); shutting down without waiting for them. Those not acked by then are redelivered ` +
          'after their visibility timeout (raise shutdownTimeoutMs if handlers need longer).',
      );
    }
  }

  private async handleBatch(messages: Message[]): Promise<Message[]> {
    if (!this.running) {
      // Received during a stop: visible again now, instead of after their timeout.
      await this.changeVisibility(
        messages.map((message, index) => visibility(message, index, 0)),
        'release the message(s) received while stopping',
      );
      return [];
    }
    this.inFlight.add(messages);
    try {
      const results = await this.settings.dispatcher.dispatchBatch(messages.map(toSqsRecord), {
        queue: this.settings.queue,
        queueUrl: this.settings.url,
        raw: messages,
        recordTimeoutMs: this.settings.options.handleMessageTimeout,
      });
      const acked: Message[] = [];
      const sooner: VisibilityEntry[] = [];
      for (let i = 0; i < messages.length; i++) {
        const { status, error } = results[i];
        if (!isFailedStatus(status)) {
          acked.push(messages[i]);
          continue;
        }
        // In-flight duplicates fail on purpose, routine under redelivery: no error, and back at their pace.
        if (!needsAttention(status)) continue;
        const event = error instanceof SqsRecordTimeoutError ? 'timeout_error' : 'processing_error';
        this.sqsConsumer.emit(event, error ?? new Error(`status ${status}`), messages[i]);
        const seconds = this.terminationTimeout(messages[i]);
        if (seconds !== undefined) sooner.push(visibility(messages[i], i, seconds));
      }
      if (sooner.length > 0) await this.changeVisibility(sooner, 'return failed message(s) sooner');
      return acked;
    } finally {
      this.inFlight.delete(messages);
    }
  }

  /** Asks SQS for the queue's ARN (`failFastOnStartup`); says what failed, naming the queue, its URL and the cause. */
  async queueProblem(): Promise<string | undefined> {
    const { url } = this.settings;
    try {
      const { GetQueueAttributesCommand } = await loadSqsSdk();
      await this.settings.client.send(
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
      );
      return undefined;
    } catch (error) {
      const cause = receiveErrorText(error as Error);
      return isMissingQueue(error)
        ? `queue "${this.queue}" does not exist: ${url} (${cause}); check the URL, and that the client's region ` +
            "and account are the queue's"
        : `queue "${this.queue}" could not be checked at ${url} (${cause})`;
    }
  }

  /** The visibility `terminateVisibilityTimeout` gives a failed message (`undefined`: it keeps its own). */
  private terminationTimeout(message: Message): number | undefined {
    const option = this.settings.options.terminateVisibilityTimeout;
    if (typeof option !== 'function') return option === true ? 0 : option === false ? undefined : option;
    try {
      const seconds: unknown = option(message);
      if (typeof seconds !== 'number' || !Number.isFinite(seconds)) {
        throw new Error(`it returned ${String(seconds)}, not a number of seconds`);
      }
      return Math.min(MAX_VISIBILITY_S, Math.max(0, Math.round(seconds)));
    } catch (error) {
      this.logger.error(
        `Queue "${this.queue}": terminateVisibilityTimeout failed for message ${message.MessageId} ` +
          `(${(error as Error).message}); it keeps its visibility timeout.`,
      );
      return undefined;
    }
  }

  /** ChangeMessageVisibilityBatch; a failure is logged (the messages then keep their timeout). */
  private async changeVisibility(entries: VisibilityEntry[], purpose: string): Promise<void> {
    try {
      const { ChangeMessageVisibilityBatchCommand } = await loadSqsSdk();
      const output = await this.settings.client.send(
        new ChangeMessageVisibilityBatchCommand({ QueueUrl: this.settings.url, Entries: entries }),
      );
      if (output.Failed?.length) {
        throw new Error(
          output.Failed.map(({ Id, Code, Message }) => `${Id}: ${Code}${Message ? ` ${Message}` : ''}`).join(
            '; ',
          ),
        );
      }
    } catch (error) {
      this.logger.warn(
        `Queue "${this.queue}": could not ${purpose} (${entries.length} message(s): ${(error as Error).message}); ` +
          'they reappear after their visibility timeout.',
      );
    }
  }

  private onError(error: Error, messages: Message | Message[] | undefined): void {
    if (messages === undefined) {
      // A receive failed. While stopping, that is the aborted long poll.
      if (!this.running) return;
      // The next receive waits for sqs-consumer's own pause, then for the backoff's.
      const delay = sqsConsumerPauseAfter(error, this.settings.options) + this.backoff.failed();
      const { url } = this.settings;
      if (isMissingQueue(error) && !this.missingQueueReported) {
        this.missingQueueReported = true;
        this.logger.error(
          `Queue "${this.queue}" does not exist: ${url} (${receiveErrorText(error)}). Check the URL, and that the ` +
            "client's region and account are the queue's. Polling retries (next receive in " +
            `${formatDelay(delay)}); set failFastOnStartup: true to refuse to start instead.`,
        );
        return;
      }
      this.logger.warn(
        `Queue "${this.queue}" (${url}): receive failed (${receiveErrorText(error)}); next receive in ` +
          `${formatDelay(delay)} (${this.backoff.consecutiveFailures} in a row).`,
      );
      return;
    }
    const ids = (Array.isArray(messages) ? messages : [messages]).map((message) => message.MessageId);
    this.logger.error(
      `Queue "${this.queue}": ${error.message} (message(s) ${ids.join(', ')}). Messages not deleted are ` +
        'redelivered after their visibility timeout.',
    );
  }

  private receiveSucceeded(): void {
    const failures = this.backoff.succeeded();
    if (failures > 0) {
      this.logger.log(`Queue "${this.queue}": receiving again after ${failures} failed receive(s).`);
    }
  }
}

function visibility(message: Message, index: number, seconds: number): VisibilityEntry {
  return { Id: String(index), ReceiptHandle: message.ReceiptHandle, VisibilityTimeout: seconds };
}

/**
 * sqs-consumer waits `authenticationErrorTimeout` after these errors (its own list, not exported),
 * else `pollingWaitTimeMs`; the log line says that wait plus the module's backoff. Kept (issue 50) as
 * the one way to announce the delay that really passes (docs/hosts/polling.md, sqs-missing-queue
 * spec): sqs-consumer 14 exports no `isConnectionError`, and its pause cannot be read or replaced
 * without changing `authenticationErrorTimeout`. A peer that changes the list only skews the line.
 */
const PAUSING_CODES = new Set([
  'CredentialsError',
  'UnknownEndpoint',
  'AWS.SimpleQueueService.NonExistentQueue',
  'CredentialsProviderError',
  'InvalidAddress',
  'InvalidSecurity',
  'QueueDoesNotExist',
  'RequestThrottled',
  'OverLimit',
]);

const DEFAULT_AUTHENTICATION_ERROR_TIMEOUT_MS = 10_000;

/** How long sqs-consumer itself waits after this receive error before polling again. */
function sqsConsumerPauseAfter(error: unknown, options: SqsConsumerOptions): number {
  const { code, statusCode } = (error ?? {}) as { code?: unknown; statusCode?: unknown };
  const pauses = statusCode === 403 || (typeof code === 'string' && PAUSING_CODES.has(code));
  return pauses
    ? (options.authenticationErrorTimeout ?? DEFAULT_AUTHENTICATION_ERROR_TIMEOUT_MS)
    : (options.pollingWaitTimeMs ?? 0);
}

/** The queue URL names no queue (a typo, another region or account, a queue not created yet). */
function isMissingQueue(error: unknown): boolean {
  const { code, name, Code } = (error ?? {}) as { code?: unknown; name?: unknown; Code?: unknown };
  return [code, name, Code].some(
    (value) => value === 'QueueDoesNotExist' || value === 'AWS.SimpleQueueService.NonExistentQueue',
  );
}

/** Milliseconds for people: "167 ms", "10.2 s". */
function formatDelay(ms: number): string {
  return ms < 1_000 ? `${Math.round(ms)} ms` : `${(ms / 1_000).toFixed(1)} s`;
}

/** An error's message without sqs-consumer's prefix or a trailing period (it goes in parentheses). */
function receiveErrorText(error: Error): string {
  return error.message.replace(/^SQS receive message failed: /, '').replace(/\.+$/, '');
}
