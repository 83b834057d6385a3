import type {
  SqsClientOption,
  SqsConsumerOptions,
  SqsDispatchOptions,
  SqsRecordLogOptions,
} from '../sqs/sqs-module-options.interface';

/** One queue `SqsServer` consumes. */
export interface SqsServerQueueOptions extends SqsDispatchOptions, SqsConsumerOptions {
  /** The queue's name in logs, `ctx.queue`, and for `@SqsMessageHandler(Event, { queue })` bindings. */
  name: string;
  /** The queue URL (required: the server polls every queue it lists). */
  url: string;
  /** FIFO queue; default: the name or URL ends with `.fifo`. */
  fifo?: boolean;
  /** The client for this queue; default: the server's `client`. */
  client?: SqsClientOption;
}

/**
 * Options of `new SqsServer()`. Dispatch options (`discriminator`, `concurrency`,
 * `fifoFailureMode`, `validation`) and sqs-consumer options (`batchSize`, `visibilityTimeout`,
 * `waitTimeSeconds`, `heartbeatInterval`, ...) set here are defaults for every queue, as in
 * `SqsModule.forRoot()`.
 */
export interface SqsServerOptions extends SqsDispatchOptions, SqsConsumerOptions {
  queues: SqsServerQueueOptions[];
  /** The SQS client of every queue (unless a queue has its own). Default: `new SQSClient({})`. */
  client?: SqsClientOption;
  /**
   * On `close()`, how long to wait for in-flight handlers to finish and be acked. Default 25 000
   * (below the 30 s grace period of ECS and Kubernetes).
   */
  shutdownTimeoutMs?: number;
  /** The per-record log line; `false` turns it off. */
  recordLog?: SqsRecordLogOptions | false;
  /**
   * Check every queue before polling (one `GetQueueAttributes` call each): a queue that does not
   * exist, or cannot be reached, makes `listen()` fail with an error naming it and its URL.
   * Default `false`: a missing queue is logged once and polling retries until it appears.
   */
  failFastOnStartup?: boolean;
}
