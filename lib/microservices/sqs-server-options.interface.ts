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

/** Options of `new SqsServer()`: dispatch and sqs-consumer options are defaults for every queue, as in `SqsModule`. */
export interface SqsServerOptions extends SqsDispatchOptions, SqsConsumerOptions {
  queues: SqsServerQueueOptions[];
  /** The SQS client of every queue (unless a queue has its own). Default: `new SQSClient({})`. */
  client?: SqsClientOption;
  /** How long `close()` waits for in-flight handlers. Default 25 000. */
  shutdownTimeoutMs?: number;
  /** The per-record log line; `false` turns it off. */
  recordLog?: SqsRecordLogOptions | false;
  /** Check every queue before polling, so `listen()` fails for one missing. Default `false` (logged, retried). */
  failFastOnStartup?: boolean;
}
