import type { SqsConsumerOptions, SqsModuleOptions, SqsQueueOptions } from '../sqs-module-options.interface';

/** The sqs-consumer options the module passes through; everything else on a queue is its own. */
const PASSED_THROUGH = [
  'batchSize',
  'visibilityTimeout',
  'waitTimeSeconds',
  'heartbeatInterval',
  'pollingWaitTimeMs',
  'pollingCompleteWaitTimeMs',
  'authenticationErrorTimeout',
  'extendedAWSErrors',
] as const satisfies ReadonlyArray<keyof SqsConsumerOptions>;

/** Batch mode reads up to the SQS maximum per receive, as a Lambda event source mapping does. */
const DEFAULTS: SqsConsumerOptions = { batchSize: 10 };

/** A queue's consumer options: the defaults, then the module's, then the queue's own. */
export function resolveConsumerOptions(
  moduleOptions: SqsModuleOptions,
  queue: SqsQueueOptions,
): SqsConsumerOptions {
  const resolved: Record<string, unknown> = { ...DEFAULTS };
  for (const layer of [moduleOptions, queue]) {
    for (const key of PASSED_THROUGH) {
      if (layer[key] !== undefined) resolved[key] = layer[key];
    }
  }
  return resolved as SqsConsumerOptions;
}
