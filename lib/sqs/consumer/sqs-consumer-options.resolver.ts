import type { SqsConsumerOptions, SqsModuleOptions, SqsQueueOptions } from '../sqs-module-options.interface';
import { SqsConfigurationError } from '../../common/sqs-idempotency.error';
import { CONSUMER_OPTION_KINDS } from '../sqs-option-kinds';

const CONSUMER_OPTIONS = Object.keys(CONSUMER_OPTION_KINDS) as Array<keyof SqsConsumerOptions>;

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

/** The ranges of the options the module applies itself (their kinds are checked at start-up). */
function checkModuleOptions(options: SqsConsumerOptions, queue: string): void {
  const { terminateVisibilityTimeout: terminate, handleMessageTimeout: timeout } = options;
  if (
    typeof terminate === 'number' &&
    !(Number.isInteger(terminate) && terminate >= 0 && terminate <= 43_200)
  ) {
    throw new SqsConfigurationError(
      `SqsModule: queue "${queue}": terminateVisibilityTimeout must be true, false, whole seconds from 0 to 43200, ` +
        `or a function (message) => seconds; got ${String(terminate)}.`,
    );
  }
  if (timeout !== undefined && !(Number.isFinite(timeout) && timeout > 0)) {
    throw new SqsConfigurationError(
      `SqsModule: queue "${queue}": handleMessageTimeout must be a positive number of milliseconds; got ${String(timeout)}.`,
    );
  }
}
