import { SQS_CONSUMER_EVENT_METADATA } from '../sqs.constants';
import { describeValue } from '../../common/known-options';
import { SqsConfigurationError } from '../../common/sqs-idempotency.error';

const EVENT_NAMES = [
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
] as const;
/**
 * The events of a queue's consumer a method can listen to (sqs-consumer appends `{ queueUrl }`):
 * `processing_error (error, message)` a record failed (not an in-flight duplicate); `timeout_error
 * (error, message)`; `error (error, messages?)` a receive, delete or visibility change failed;
 * `message_received`, `message_processed (message)`; `response_processed`, `empty`, `started`,
 * `stopped`, `aborted ()`. A listener that throws is logged, never disturbs the consumer.
 */
export type SqsConsumerEventName = (typeof EVENT_NAMES)[number];

/** Throws an `SqsConfigurationError` naming `where` and the events there are, unless `event` is one. */
export function checkConsumerEventName(where: string, event: unknown): void {
  if (!(EVENT_NAMES as readonly unknown[]).includes(event)) {
    throw new SqsConfigurationError(
      `${where}: unknown event ${JSON.stringify(event)}; one of ${EVENT_NAMES.join(', ')}.`,
    );
  }
}

/** Whether this process declares any `@SqsConsumerEventHandler()`: where none is, no app loads the listeners. */
let declared = false;
export const consumerEventHandlersDeclared = (): boolean => declared;

/**
 * Makes a method a listener of one of `SqsModule`'s queues' consumer events; stack it for several.
 *
 * @example
 * ```ts
 * @SqsConsumerEventHandler('orders', 'processing_error')
 * onFailure(error: Error, message: Message) { ... }
 * ```
 */
export function SqsConsumerEventHandler(queue: string, event: SqsConsumerEventName): MethodDecorator {
  if (typeof queue !== 'string' || queue.length === 0) {
    throw new SqsConfigurationError(
      `@SqsConsumerEventHandler(queue, event): queue must be a queue name of SqsModule, got ${describeValue(queue)}.`,
    );
  }
  checkConsumerEventName('@SqsConsumerEventHandler(queue, event)', event);
  return (_target, _key, descriptor) => {
    declared = true;
    const method = descriptor.value as object;
    const bindings = getSqsConsumerEventBindings(method);
    Reflect.defineMetadata(SQS_CONSUMER_EVENT_METADATA, [...bindings, { queue, event }], method);
    return descriptor;
  };
}

/** The `@SqsConsumerEventHandler()` bindings of a method (none: empty). */
export function getSqsConsumerEventBindings(
  method: unknown,
): readonly Pick<SqsConsumerEventListener, 'queue' | 'event'>[] {
  return typeof method === 'function' ? (Reflect.getMetadata(SQS_CONSUMER_EVENT_METADATA, method) ?? []) : [];
}

/** One `@SqsConsumerEventHandler()` listener found in the app. */
/** What a consumer needs of a listener: the event, and the call (`SqsServer.on()` gives only these). */
export type SqsConsumerListener = Pick<SqsConsumerEventListener, 'event' | 'listener'>;

export interface SqsConsumerEventListener {
  /** `Class.method`, for logs and errors. */
  readonly name: string;
  readonly queue: string;
  readonly event: SqsConsumerEventName;
  /** Calls the method; never throws (a failing listener is logged). */
  readonly listener: (...args: unknown[]) => void;
}
