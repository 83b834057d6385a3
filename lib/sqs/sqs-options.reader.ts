import { describeValue, OptionShape, readOptions } from '../common/known-options';
import { SqsConfigurationError } from '../common/sqs-idempotency.error';
import type {
  SqsConsumerOptions,
  SqsDispatchOptions,
  SqsModuleOptions,
  SqsProducerOptions,
  SqsQueueOptions,
  SqsRecordLogOptions,
  SqsTracingOptions,
  SqsValidationOptions,
} from './sqs-module-options.interface';

/**
 * What each SQS option takes, by name, for the start-up reading of every place they are given
 * (`SqsModule`, its queues, `SqsServer`, `createSqsLambdaHandler`, `SqsTestClient`): a typo such as
 * `concurency` or `visiblityTimeout` stops the app naming the nearest option, instead of running with
 * the default.
 */

export const DISPATCH_OPTION_SHAPE: OptionShape<SqsDispatchOptions> = {
  discriminator: [{ field: 'string', attribute: 'string' }, 'function'],
  decoder: ['string', 'function'],
  envelope: ['string', 'array'],
  concurrency: 'number',
  fifoFailureMode: 'string',
  validation: {
    validate: 'boolean',
    transformOptions: 'object',
    validatorOptions: 'object',
  } satisfies OptionShape<SqsValidationOptions>,
};

export const CONSUMER_OPTION_SHAPE: OptionShape<SqsConsumerOptions> = {
  batchSize: 'number',
  visibilityTimeout: 'number',
  waitTimeSeconds: 'number',
  heartbeatInterval: 'number',
  pollingWaitTimeMs: 'number',
  pollingCompleteWaitTimeMs: 'number',
  authenticationErrorTimeout: 'number',
  extendedAWSErrors: 'boolean',
  terminateVisibilityTimeout: ['boolean', 'number', 'function'],
  handleMessageTimeout: 'number',
};

export const QUEUE_OPTION_SHAPE: OptionShape<SqsQueueOptions> = {
  ...DISPATCH_OPTION_SHAPE,
  ...CONSUMER_OPTION_SHAPE,
  name: 'string',
  url: 'string',
  fifo: 'boolean',
  client: 'object',
  consume: 'boolean',
};

export const MODULE_OPTION_SHAPE: OptionShape<SqsModuleOptions> = {
  ...DISPATCH_OPTION_SHAPE,
  ...CONSUMER_OPTION_SHAPE,
  queues: 'array',
  client: 'object',
  autoStart: 'boolean',
  failFastOnStartup: 'boolean',
  shutdownTimeoutMs: 'number',
  recordLog: [
    { format: 'string', hashKeys: 'boolean' } satisfies OptionShape<SqsRecordLogOptions>,
    'boolean',
  ],
  tracing: [{ parent: 'string', recordKeys: 'boolean' } satisfies OptionShape<SqsTracingOptions>, 'boolean'],
  producer: {
    validate: 'boolean',
    maxAttempts: 'number',
    retryDelayMs: 'number',
    snsClient: 'object',
    cloudEventsSource: 'string',
  } satisfies OptionShape<SqsProducerOptions>,
};

/** The options of a host that lists queues (`SqsModule`, `SqsServer`), each queue read too. */
export function readSqsHostOptions<T extends { queues?: readonly object[] } = SqsModuleOptions>(
  options: T | undefined,
  where: string,
  shape: OptionShape<T> = MODULE_OPTION_SHAPE as OptionShape<T>,
  queueShape: OptionShape<object> = QUEUE_OPTION_SHAPE,
): T {
  const read = readOptions(options, shape, where, SqsConfigurationError);
  const queues = read.queues?.map((queue, index) =>
    readQueue(queue, `${where}: queues[${index}]`, queueShape),
  );
  return queues === undefined ? read : { ...read, queues };
}

/** A queue read, refused without a name: handlers bind to it, and every queue is known by it. */
function readQueue(queue: object, at: string, shape: OptionShape<object>): object {
  const read: Partial<SqsQueueOptions> = readOptions(
    queue,
    shape,
    at + labelOf(queue),
    SqsConfigurationError,
  );
  if (typeof read.name === 'string' && read.name.length > 0) return read;
  const guess = read.url?.slice(read.url.lastIndexOf('/') + 1) || 'orders';
  throw new SqsConfigurationError(
    `${at}${read.url ? ` (url "${read.url}")` : ''} has no name` +
      (read.name === undefined ? '' : ` (got ${describeValue(read.name)})`) +
      `: give each queue the name its handlers bind to, e.g. { name: '${guess}', url }.`,
  );
}

/** ` ("orders")` for a queue whose own `name` is a string, else nothing (and no getter called). */
function labelOf(queue: unknown): string {
  const name: unknown = Object.getOwnPropertyDescriptor(queue ?? {}, 'name')?.value;
  return typeof name === 'string' ? ` ("${name}")` : '';
}
