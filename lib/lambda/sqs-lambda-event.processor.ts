import { SqsConfigurationError } from '../common/sqs-idempotency.error';
import type { SqsQueueRegistry } from '../sqs/nest/sqs-queue.registry';
import { isFailedStatus, SqsRecordResult } from '../idempotency/record-outcome';
import type {
  LambdaContextLike,
  SqsBatchResponse,
  SqsLambdaEvent,
  SqsLambdaHandlerOptions,
} from './sqs-lambda.types';

/**
 * One Lambda event to a partial batch response, for `createSqsLambdaHandler()` and `SqsTestClient`
 * alike. A batch of failures is answered, not thrown (a throw would retry the successes too).
 */
export class SqsLambdaEventProcessor {
  constructor(
    private readonly dispatcher: SqsQueueRegistry,
    private readonly options: SqsLambdaHandlerOptions = {},
  ) {
    dispatcher.assertUsable(options);
  }

  /** The response for Lambda, and every record's result. */
  async process(
    event: SqsLambdaEvent,
    context?: LambdaContextLike,
  ): Promise<{ response: SqsBatchResponse; results: SqsRecordResult[] }> {
    const records = event?.Records;
    if (!Array.isArray(records)) {
      throw new SqsConfigurationError(
        'createSqsLambdaHandler: the event has no Records array; only an SQS event source mapping can invoke this handler.',
      );
    }
    if (records.length === 0) return { response: { batchItemFailures: [] }, results: [] };
    const remaining = context?.getRemainingTimeInMillis;
    const results = await this.dispatcher.dispatchBatch(records, {
      queue: this.options.queue ?? queueOfBatch(records),
      overrides: this.options,
      remainingTimeMs: typeof remaining === 'function' ? () => remaining.call(context) : undefined,
    });
    // An empty identifier makes Lambda fail the whole batch, which is what a record without a
    // messageId deserves: nothing is acked that could not be named.
    const batchItemFailures = results.flatMap(({ status, messageId }) =>
      isFailedStatus(status) ? [{ itemIdentifier: messageId }] : [],
    );
    return { response: { batchItemFailures }, results };
  }
}

/** The queue name in the first record's ARN (`arn:aws:sqs:region:account:name`); one mapping feeds one queue. */
function queueOfBatch(records: SqsLambdaEvent['Records']): string {
  for (const record of records) {
    const arn = record?.eventSourceARN;
    if (typeof arn === 'string' && arn.length > 0) return arn.slice(arn.lastIndexOf(':') + 1);
  }
  return 'default';
}
