import type { SqsHandlerDefinition } from '../nest/sqs-handler.explorer';
import { queueAliases } from '../nest/sqs-queue.registry';
import type { SqsQueueOptions } from '../sqs-module-options.interface';
import type { SqsConsumerEventListener } from './sqs-consumer-event.decorator';
import { SqsConfigurationError } from '../../common/sqs-idempotency.error';

/**
 * Every handler and listener must name a configured queue (checked at bootstrap when `SqsModule` lists
 * queues); with several queues a handler must name one, since guessing would misroute its type.
 */
export function checkQueueBindings(
  queues: readonly SqsQueueOptions[],
  handlers: readonly SqsHandlerDefinition[],
  listeners: readonly SqsConsumerEventListener[],
): void {
  if (queues.length === 0) return;
  const problems: string[] = [];
  const known = new Set<string>();
  for (const queue of queues) {
    checkQueueName(queue.name, known, problems);
    for (const alias of queueAliases(queue)) known.add(alias);
  }
  const configured = queues.map((queue) => `"${queue?.name}"`).join(', ');
  for (const handler of handlers) {
    if (handler.queue === undefined) {
      if (queues.length > 1) {
        problems.push(
          `${handler.name} has no queue, and SqsModule consumes several (${configured}): ` +
            `bind it with @SqsMessageHandler(${handler.eventClass.name}, { queue: '...' })`,
        );
      }
    } else if (!known.has(handler.queue)) {
      problems.push(
        `${handler.name} is bound to queue "${handler.queue}", which SqsModule does not configure (queues: ${configured})`,
      );
    }
  }
  for (const listener of listeners) {
    if (!known.has(listener.queue)) {
      problems.push(
        `${listener.name} listens to '${listener.event}' of queue "${listener.queue}", which SqsModule does not ` +
          `configure (queues: ${configured})`,
      );
    }
  }
  if (problems.length > 0) {
    throw new SqsConfigurationError(
      `SqsModule cannot start:\n- ${problems.join('\n- ')}\n` +
        'Fix the queue names in SqsModule.forRoot({ queues }) or in the decorators.',
    );
  }
}

/** Says so in `problems` when `taken` has `name` already (every queue has a name: `readSqsHostOptions`). */
export function checkQueueName(
  name: string,
  taken: { has(name: string): boolean },
  problems: string[],
): void {
  if (taken.has(name)) problems.push(`the queue name "${name}" is configured twice`);
}
