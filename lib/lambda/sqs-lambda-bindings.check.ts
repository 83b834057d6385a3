import type { SqsHandlerDefinition } from '../sqs/nest/sqs-handler.explorer';
import type { SqsQueueOptions } from '../sqs/sqs-module-options.interface';

/**
 * In Lambda a record's queue is the name in its ARN: a handler bound to a queue whose `url` is unset
 * in the function can be reached only by name, so each such handler is named once at bootstrap.
 *
 * @param forcedQueue `createSqsLambdaHandler(AppModule, { queue })`: every record is routed as that queue.
 */
export function unreachableLambdaBindings(
  queues: readonly SqsQueueOptions[],
  handlers: readonly SqsHandlerDefinition[],
  forcedQueue: string | undefined,
): string[] {
  const warnings: string[] = [];
  for (const queue of queues) {
    if (!('url' in queue) || queue.url || queue.name === forcedQueue) continue;
    const bound = handlers.filter((handler) => handler.queue === queue.name).map((handler) => handler.name);
    if (bound.length === 0) continue;
    warnings.push(
      `${bound.join(', ')} ${bound.length === 1 ? 'is' : 'are'} bound to queue "${queue.name}", whose url is ` +
        `${JSON.stringify(queue.url)} in this function (an unset environment variable?). Lambda routes a record by ` +
        `the queue name in its eventSourceARN, matched against each queue's name and the name at the end of its ` +
        `url: without the url, only records of an SQS queue named "${queue.name}" reach ${bound.length === 1 ? 'it' : 'them'}, ` +
        `and the others fail as invalid. Set the url, or createSqsLambdaHandler(AppModule, { queue: '${queue.name}' }) ` +
        'when this function is fed by that queue alone.',
    );
  }
  return warnings;
}
