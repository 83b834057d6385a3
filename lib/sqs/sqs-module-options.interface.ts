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
  /** Where the event type is read. Default `{ field: 'type' }`; a queue with one event type needs none. */
  discriminator?: SqsDiscriminator;
  /** Records (standard queues) or groups (FIFO) handled at once. Default 10. */
  concurrency?: number;
  /** FIFO failure handling. Default `'isolate_groups'`. */
  fifoFailureMode?: FifoFailureMode;
  /** Body decoding and validation. */
  validation?: SqsValidationOptions;
}

/** One queue the app consumes. */
export interface SqsQueueOptions extends SqsDispatchOptions {
  /** The name handlers bind to with `@SqsMessageHandler(Event, { queue })`. */
  name: string;
  /** The queue URL (needed by the polling host). */
  url?: string;
  /** FIFO queue; default: the name or URL ends with `.fifo`. */
  fifo?: boolean;
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

/** Options of `SqsModule.forRoot()`. Dispatch options here are defaults for every queue. */
export interface SqsModuleOptions extends SqsDispatchOptions {
  queues?: SqsQueueOptions[];
  /** The per-record log line; `false` turns it off. */
  recordLog?: SqsRecordLogOptions | false;
}

/** Dispatch options with every default applied. */
export interface ResolvedSqsDispatchOptions {
  discriminator: SqsDiscriminator;
  concurrency: number;
  fifoFailureMode: FifoFailureMode;
  validation: SqsValidationOptions;
}

export const SQS_DISPATCH_DEFAULTS: ResolvedSqsDispatchOptions = {
  discriminator: { field: 'type' },
  concurrency: 10,
  fifoFailureMode: 'isolate_groups',
  validation: {},
};
