import type { SqsQueueConsumer } from './sqs-queue.consumer';
import { SqsConfigurationError } from '../../common/sqs-idempotency.error';

/** `failFastOnStartup`: asks SQS about every queue before polling, one error listing what is wrong. */
export async function checkQueuesAtStartup(
  host: 'SqsModule' | 'SqsServer',
  consumers: Iterable<SqsQueueConsumer>,
): Promise<void> {
  const results = await Promise.allSettled([...consumers].map((consumer) => consumer.checkQueue()));
  const problems = results.flatMap((result) =>
    result.status === 'rejected' ? [(result.reason as Error).message] : [],
  );
  if (problems.length > 0) {
    throw new SqsConfigurationError(
      `${host} cannot start (failFastOnStartup):\n- ${problems.join('\n- ')}\n` +
        'Fix the queue URLs or the client (region, credentials, endpoint); or drop failFastOnStartup to start ' +
        'anyway and keep polling until the queues answer.',
    );
  }
}
