// Users may decorate handlers before anything loads Nest (which loads the polyfill).
import 'reflect-metadata';
import { SQS_EVENT_METADATA } from './sqs.constants';
import { SQS_FALLBACK_EVENT_TYPE } from './sqs-event.decorator';
import { SqsMessageHandler, SqsMessageHandlerOptions } from './sqs-message-handler.decorator';

/**
 * The stand-in event class of fallback handlers: `@SqsFallbackHandler()` is
 * `@SqsMessageHandler(SqsFallback)`. Its type name is `'*'` (the default idempotency scope and the
 * Idempotency Center's row of a fallback handler).
 */
export class SqsFallback {}
Reflect.defineMetadata(SQS_EVENT_METADATA, SQS_FALLBACK_EVENT_TYPE, SqsFallback);

/**
 * Makes a provider method the handler of the messages of a queue that no `@SqsMessageHandler()`
 * claims: an event type without a handler, or no event type on a queue with several. Without one,
 * such a message is invalid (it fails, and reaches the dead-letter queue). The handler receives
 * the decoded payload as it is (a JSON object, or `{ body }` for text and bytes), unvalidated, and
 * the context (`ctx.eventType` is the message's type, or `'*'` when it has none). It runs through
 * Nest's pipeline and may be `@Idempotent()`, like any handler.
 *
 * @example
 * ```ts
 * @SqsFallbackHandler({ queue: 'orders' })
 * async onUnknown(payload: Record<string, unknown>, ctx: SqsContext) {
 *   this.logger.warn(`ignored ${ctx.eventType} ${ctx.messageId}`);   // acked: it returns normally
 * }
 * ```
 */
export function SqsFallbackHandler(options: SqsMessageHandlerOptions = {}): MethodDecorator {
  return SqsMessageHandler(SqsFallback, options);
}
