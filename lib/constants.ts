/**
 * Every injection token and metadata key of the library, in one place so that no two files invent
 * the same string. Symbols for DI tokens (they cannot collide with a user's string tokens);
 * strings for reflect-metadata keys (readable when debugging).
 */

/** Options given to `IdempotencyModule.forRoot()` / `forRootAsync()`, after validation. */
export const IDEMPOTENCY_MODULE_OPTIONS = Symbol('IDEMPOTENCY_MODULE_OPTIONS');

/** Options given to `SqsModule.forRoot()` / `forRootAsync()`. */
export const SQS_MODULE_OPTIONS = Symbol('SQS_MODULE_OPTIONS');

/** `@Idempotent()` options on a method or a class. */
export const IDEMPOTENT_METADATA = 'nestjs-idempotent-sqs:idempotent';

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

/** `@EventPattern()` metadata key of `@nestjs/microservices`, read without importing that package. */
export const MICROSERVICES_PATTERN_METADATA = 'microservices:pattern';

/** Present (`true`) when the app runs as a Lambda handler: no pollers may start. */
export const SQS_LAMBDA_HOST = Symbol('SQS_LAMBDA_HOST');

/** Options of the Idempotency Center's counters (`stats` in `IdempotencyModule.forRoot()`). */
export const IDEMPOTENCY_STATS_OPTIONS = Symbol('IDEMPOTENCY_STATS_OPTIONS');

/** `@SqsConsumerEventHandler()` bindings (queue and event name) on a provider method. */
export const SQS_CONSUMER_EVENT_METADATA = 'nestjs-idempotent-sqs:consumer-event';

/**
 * The method by which a microservice transport (`SqsServer`) receives the app's record pipeline, so
 * its records of `@SqsMessageHandler()` types reach those handlers. `Symbol.for`, not `Symbol`: a
 * protocol between two files of which an app may load two copies, not a DI token.
 */
export const SQS_DISPATCHER_BINDING = Symbol.for('nestjs-idempotent-sqs:bind-dispatcher');

/** Options of `IdempotencyCenterModule.forRoot()`, resolved. */
export const IDEMPOTENCY_CENTER_OPTIONS = Symbol('IDEMPOTENCY_CENTER_OPTIONS');

/**
 * Marks an interceptor class (`IdempotencyInterceptor`, as its own static) whose claim the SQS hosts
 * may make without Nest's interceptor machinery (`lib/sqs/sqs-direct-call.ts`). A symbol read off
 * the class found in a handler's metadata, so the SQS side imports nothing of the idempotency code.
 */
export const SQS_DIRECT_CLAIM = Symbol('SQS_DIRECT_CLAIM');
