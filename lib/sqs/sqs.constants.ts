/**
 * The injection tokens and metadata keys of the SQS pipeline and its hosts. Symbols for DI tokens (they
 * cannot collide with a user's string tokens); strings for reflect-metadata keys (readable when debugging).
 */

/** Options given to `SqsModule.forRoot()` / `forRootAsync()`. */
export const SQS_MODULE_OPTIONS = Symbol('SQS_MODULE_OPTIONS');

/** `@SqsEvent()` type name on an event class. */
export const SQS_EVENT_METADATA = 'nestjs-idempotent-sqs:event';

/** `@SqsEvent()` options (decoder, encoder) on an event class. */
export const SQS_EVENT_OPTIONS_METADATA = 'nestjs-idempotent-sqs:event-options';

/** `@SqsMessageHandler()` binding on a provider method. */
export const SQS_MESSAGE_HANDLER_METADATA = 'nestjs-idempotent-sqs:message-handler';

/**
 * Parameter metadata the SQS host hands to Nest's `ExternalContextCreator`: the handler's own
 * decorators plus the implicit `(event, ctx)` positions. Kept apart from Nest's route-args key so
 * that HTTP or RPC metadata on the same method is never rewritten.
 */
export const SQS_ARGS_METADATA = 'nestjs-idempotent-sqs:args';

/** Present (`true`) when the app runs as a Lambda handler: no pollers may start. */
export const SQS_LAMBDA_HOST = Symbol('SQS_LAMBDA_HOST');

/** `@SqsConsumerEventHandler()` bindings (queue and event name) on a provider method. */
export const SQS_CONSUMER_EVENT_METADATA = 'nestjs-idempotent-sqs:consumer-event';

/**
 * The method by which a microservice transport (`SqsServer`) receives the app's record pipeline, so
 * its records of `@SqsMessageHandler()` types reach those handlers. `Symbol.for`, not `Symbol`: a
 * protocol between two files of which an app may load two copies, not a DI token.
 */
export const SQS_DISPATCHER_BINDING = Symbol.for('nestjs-idempotent-sqs:bind-dispatcher');
