import type { SqsConsumerOptions, SqsModuleOptions, SqsQueueOptions } from '../sqs-module-options.interface';
import { SqsConfigurationError } from '../../common/sqs-idempotency.error';

/** A queue's consumer options: passed to sqs-consumer, or applied per record by the module (batch mode). */
const CONSUMER_OPTIONS = [
  'batchSize',
  'visibilityTimeout',
  'waitTimeSeconds',
  'heartbeatInterval',
  'pollingWaitTimeMs',
  'pollingCompleteWaitTimeMs',
  'authenticationErrorTimeout',
  'extendedAWSErrors',
  'terminateVisibilityTimeout',
  'handleMessageTimeout',
] as const satisfies ReadonlyArray<keyof SqsConsumerOptions>;

/** Options the module implements itself: never handed to sqs-consumer. */
export const MODULE_CONSUMER_OPTIONS = ['terminateVisibilityTimeout', 'handleMessageTimeout'] as const;

/** Batch mode reads up to the SQS maximum per receive, as a Lambda event source mapping does. */
const DEFAULTS: SqsConsumerOptions = { batchSize: 10 };

/** A queue's consumer options: the defaults, then the module's, then the queue's own. */
export function resolveConsumerOptions(
  moduleOptions: SqsModuleOptions,
  queue: SqsQueueOptions,
): SqsConsumerOptions {
  const resolved: Record<string, unknown> = { ...DEFAULTS };
  for (const layer of [moduleOptions, queue]) {
    for (const key of CONSUMER_OPTIONS) {
      if (layer[key] !== undefined) resolved[key] = layer[key];
    }
  }
  checkModuleOptions(resolved as SqsConsumerOptions, queue.name);
  return resolved as SqsConsumerOptions;
}

function checkModuleOptions(options: SqsConsumerOptions, queue: string): void {
  const { terminateVisibilityTimeout: terminate, handleMessageTimeout: timeout } = options;
  if (
    terminate !== undefined &&
    typeof terminate !== 'boolean' &&
    typeof terminate !== 'function' &&
    !(typeof terminate === 'number' && Number.isInteger(terminate) && terminate >= 0 && terminate <= 43_200)
  ) {
    throw new SqsConfigurationError(
      `SqsModule: queue "${queue}": terminateVisibilityTimeout must be true, false, whole seconds from 0 to 43200, ` +
        `or a function (message) => seconds; got ${String(terminate)}.`,
    );
  }
  if (timeout !== undefined && !(typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0)) {
    throw new SqsConfigurationError(
      `SqsModule: queue "${queue}": handleMessageTimeout must be a positive number of milliseconds; got ${String(timeout)}.`,
    );
  }
}
