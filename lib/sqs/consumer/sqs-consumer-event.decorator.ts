import type { Logger } from '@nestjs/common';
import { SQS_CONSUMER_EVENT_METADATA } from '../sqs.constants';

/**
 * The events of a queue's consumer a provider method can listen to, with the arguments it receives
 * (sqs-consumer appends `{ queueUrl }` as the last argument of each):
 *
 * | event | arguments | when |
 * |---|---|---|
 * | `processing_error` | `(error, message)` | a record failed: its handler threw, it is invalid, or a failed FIFO record before it kept it from running (not emitted for in-flight duplicates, which fail on purpose) |
 * | `timeout_error` | `(error, message)` | a record was still running after `handleMessageTimeout` (it fails; its handler runs on) |
 * | `error` | `(error, messages?)` | a receive, delete or visibility change failed (`messages` when it concerned some) |
 * | `message_received` | `(message)` | a message was received |
 * | `message_processed` | `(message)` | a message was acked (deleted) |
 * | `response_processed` | `()` | a batch is done (acked records deleted) |
 * | `empty` | `()` | a receive returned nothing |
 * | `started`, `stopped`, `aborted` | `()` | the consumer started, stopped, aborted its requests |
 *
 * `message` is the SDK's `Message`. Listeners that throw or reject are logged and never disturb
 * the consumer.
 */
export type SqsConsumerEventName =
  | 'processing_error'
  | 'timeout_error'
  | 'error'
  | 'message_received'
  | 'message_processed'
  | 'response_processed'
  | 'empty'
  | 'started'
  | 'stopped'
  | 'aborted';

/** Every event name, to check bindings at bootstrap. */
export const SQS_CONSUMER_EVENT_NAMES: ReadonlySet<string> = new Set<SqsConsumerEventName>([
  'processing_error',
  'timeout_error',
  'error',
  'message_received',
  'message_processed',
  'response_processed',
  'empty',
  'started',
  'stopped',
  'aborted',
]);

/** One `@SqsConsumerEventHandler()` binding. */
export interface SqsConsumerEventBinding {
  queue: string;
  event: SqsConsumerEventName;
}

/**
 * Makes a provider method a listener of an event of one queue's consumer (the polling host). The
 * queue must be one of `SqsModule`'s queues, or the app does not start. Stack it to listen to
 * several events or queues.
 *
 * @example
 * ```ts
 * @Injectable()
 * export class OrdersAlerts {
 *   @SqsConsumerEventHandler('orders', 'processing_error')
 *   onFailure(error: Error, message: Message) {
 *     this.metrics.increment('orders.failed', { reason: error.name });
 *   }
 * }
 * ```
 */
export function SqsConsumerEventHandler(queue: string, event: SqsConsumerEventName): MethodDecorator {
  if (typeof queue !== 'string' || queue.length === 0) {
    throw new TypeError('@SqsConsumerEventHandler(queue, event): queue must be a queue name of SqsModule');
  }
  if (!SQS_CONSUMER_EVENT_NAMES.has(event)) {
    throw new TypeError(
      `@SqsConsumerEventHandler(queue, event): unknown event ${JSON.stringify(event)}; ` +
        `one of ${[...SQS_CONSUMER_EVENT_NAMES].join(', ')}.`,
    );
  }
  return (_target, _key, descriptor) => {
    const method = descriptor.value as object;
    const bindings = getSqsConsumerEventBindings(method);
    Reflect.defineMetadata(SQS_CONSUMER_EVENT_METADATA, [...bindings, { queue, event }], method);
    return descriptor;
  };
}

/** The `@SqsConsumerEventHandler()` bindings of a method (none: empty). */
export function getSqsConsumerEventBindings(method: unknown): readonly SqsConsumerEventBinding[] {
  return typeof method === 'function' ? (Reflect.getMetadata(SQS_CONSUMER_EVENT_METADATA, method) ?? []) : [];
}

/** One `@SqsConsumerEventHandler()` listener found in the app. */
export interface SqsConsumerEventListener {
  /** `Class.method`, for logs and errors. */
  readonly name: string;
  readonly queue: string;
  readonly event: SqsConsumerEventName;
  /** Calls the method; never throws (a failing listener is logged). */
  readonly listener: (...args: unknown[]) => void;
}

/**
 * A consumer event listener that never disturbs the consumer: an exception or a rejected promise
 * is logged as `<what> failed: <message>`, never thrown into sqs-consumer (an EventEmitter
 * listener that throws breaks the emit).
 */
export function isolateListener(
  what: string,
  logger: Logger,
  call: (...args: unknown[]) => unknown,
): (...args: unknown[]) => void {
  const report = (error: unknown) =>
    logger.error(`${what} failed: ${(error as Error)?.message ?? String(error)}`, (error as Error)?.stack);
  return (...args: unknown[]): void => {
    try {
      const result = call(...args);
      if (result instanceof Promise) result.catch(report);
    } catch (error) {
      report(error);
    }
  };
}
