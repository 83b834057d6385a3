// Users may decorate handlers before anything loads Nest (which loads the polyfill).
import 'reflect-metadata';
import { SQS_EVENT_METADATA } from './sqs.constants';
import { SQS_FALLBACK_EVENT_TYPE } from './sqs-event.decorator';
import { SqsMessageHandler, SqsMessageHandlerOptions } from './sqs-message-handler.decorator';

/** The stand-in event class of fallback handlers; its type name is `'*'`. */
export class SqsFallback {}
Reflect.defineMetadata(SQS_EVENT_METADATA, SQS_FALLBACK_EVENT_TYPE, SqsFallback);

/**
 * The handler of a queue's messages no `@SqsMessageHandler()` claims (else they are invalid). It
 * gets the decoded payload unvalidated, and may be `@Idempotent()`.
 *
 * @example
 * ```ts
 * @SqsFallbackHandler({ queue: 'orders' })
 * async onUnknown(payload: Record<string, unknown>, ctx: SqsContext) { ... }
 * ```
 */
export function SqsFallbackHandler(options: SqsMessageHandlerOptions = {}): MethodDecorator {
  return SqsMessageHandler(SqsFallback, options);
}
