import type { SqsClientOption, SqsModuleOptions, SqsQueueOptions } from '../sqs/sqs-module-options.interface';

/** One queue `SqsServer` consumes: an `SqsModule` queue that is always polled. */
export interface SqsServerQueueOptions extends Omit<SqsQueueOptions, 'url' | 'consume' | 'client'> {
  /** The queue URL (required: the server polls every queue it lists). */
  url: string;
  /** The client for this queue; default: the server's `client`. */
  client?: SqsClientOption;
}

/**
 * Options of `new SqsServer()`: `SqsModule`'s, less `autoStart` and `producer`; dispatch and
 * sqs-consumer options are defaults for every queue, as in `SqsModule`.
 */
export interface SqsServerOptions extends Omit<SqsModuleOptions, 'queues' | 'autoStart' | 'producer'> {
  queues: SqsServerQueueOptions[];
}
