import { checkOptions, OptionKinds } from '../common/known-options';
import { SqsConfigurationError } from '../common/sqs-idempotency.error';
import type { SqsValidationOptions } from './sqs-message.decoder';
import type {
  SqsConsumerOptions,
  SqsDispatchOptions,
  SqsModuleOptions,
  SqsProducerOptions,
  SqsQueueOptions,
  SqsRecordLogOptions,
} from './sqs-module-options.interface';

/**
 * What each SQS option accepts, by name, for the start-up check of every place they are given
 * (`SqsModule`, its queues, `SqsServer`, `createSqsLambdaHandler`): a typo such as `concurency` or
 * `visiblityTimeout` stops the app naming the nearest option, instead of running with the default.
 */

export const DISPATCH_OPTION_KINDS: OptionKinds<SqsDispatchOptions> = {
  discriminator: ['object', 'function'],
  decoder: ['string', 'function'],
  envelope: ['string', 'array'],
  concurrency: 'number',
  fifoFailureMode: 'string',
  validation: 'object',
};

export const CONSUMER_OPTION_KINDS: OptionKinds<SqsConsumerOptions> = {
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

export const QUEUE_OPTION_KINDS: OptionKinds<SqsQueueOptions> = {
  ...DISPATCH_OPTION_KINDS,
  ...CONSUMER_OPTION_KINDS,
  name: 'string',
  url: 'string',
  fifo: 'boolean',
  client: 'object',
  consume: 'boolean',
};

export const MODULE_OPTION_KINDS: OptionKinds<SqsModuleOptions> = {
  ...DISPATCH_OPTION_KINDS,
  ...CONSUMER_OPTION_KINDS,
  queues: 'array',
  client: 'object',
  autoStart: 'boolean',
  failFastOnStartup: 'boolean',
  shutdownTimeoutMs: 'number',
  recordLog: ['object', 'boolean'],
  producer: 'object',
};

const VALIDATION_OPTION_KINDS: OptionKinds<SqsValidationOptions> = {
  validate: 'boolean',
  transformOptions: 'object',
  validatorOptions: 'object',
};

const RECORD_LOG_OPTION_KINDS: OptionKinds<SqsRecordLogOptions> = {
  format: 'string',
  hashKeys: 'boolean',
};

const PRODUCER_OPTION_KINDS: OptionKinds<SqsProducerOptions> = {
  validate: 'boolean',
  maxAttempts: 'number',
  retryDelayMs: 'number',
  snsClient: 'object',
  cloudEventsSource: 'string',
};

const DISCRIMINATOR_OPTION_KINDS = { field: 'string', attribute: 'string' } as const;

const fail = (message: string) => new SqsConfigurationError(message);

/** Checks dispatch options given at `where` (and the objects inside them). */
export function checkDispatchOptions(
  options: SqsDispatchOptions | undefined,
  where: string,
  kinds: OptionKinds<object> = DISPATCH_OPTION_KINDS,
): void {
  checkOptions(options, kinds, where, fail);
  if (options === undefined) return;
  if (typeof options.discriminator === 'object') {
    checkOptions(options.discriminator, DISCRIMINATOR_OPTION_KINDS, `${where}: discriminator`, fail);
  }
  checkOptions(options.validation, VALIDATION_OPTION_KINDS, `${where}: validation`, fail);
}

/**
 * Checks the options of a host that lists queues (`SqsModule`, `SqsServer`), each queue's, and the
 * objects inside them (`validation`, `recordLog`, `producer`).
 */
export function checkSqsHostOptions(
  options: Pick<SqsModuleOptions, 'queues' | 'recordLog' | 'producer' | keyof SqsDispatchOptions> | undefined,
  where = 'SqsModule options',
  kinds: OptionKinds<object> = MODULE_OPTION_KINDS,
  queueKinds: OptionKinds<object> = QUEUE_OPTION_KINDS,
): void {
  checkDispatchOptions(options, where, kinds);
  if (options === undefined) return;
  if (typeof options.recordLog === 'object') {
    checkOptions(options.recordLog, RECORD_LOG_OPTION_KINDS, `${where}: recordLog`, fail);
  }
  checkOptions(options.producer, PRODUCER_OPTION_KINDS, `${where}: producer`, fail);
  if (!Array.isArray(options.queues)) return;
  options.queues.forEach((queue, index) =>
    checkDispatchOptions(queue, `${where}: queues[${index}]${nameOf(queue)}`, queueKinds),
  );
}

function nameOf(queue: unknown): string {
  const name = (queue as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? ` ("${name}")` : '';
}
