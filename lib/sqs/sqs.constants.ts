/** Options given to `SqsModule.forRoot()` / `forRootAsync()`. */
export const SQS_MODULE_OPTIONS = Symbol('SQS_MODULE_OPTIONS');

/** `@SqsEvent()` type name on an event class. */
export const SQS_EVENT_METADATA = 'nestjs-idempotent-sqs:event';

/** `@SqsEvent()` options (decoder, encoder) on an event class. */
export const SQS_EVENT_OPTIONS_METADATA = 'nestjs-idempotent-sqs:event-options';

/** `@SqsMessageHandler()` binding on a provider method. */
export const SQS_MESSAGE_HANDLER_METADATA = 'nestjs-idempotent-sqs:message-handler';

/** The handler parameters Nest's `ExternalContextCreator` reads, apart from Nest's own key. */
export const SQS_ARGS_METADATA = 'nestjs-idempotent-sqs:args';

/** Present (`true`) when the app runs as a Lambda handler: no pollers may start. */
export const SQS_LAMBDA_HOST = Symbol('SQS_LAMBDA_HOST');

/** `@SqsConsumerEventHandler()` bindings (queue and event name) on a provider method. */
export const SQS_CONSUMER_EVENT_METADATA = 'nestjs-idempotent-sqs:consumer-event';

/**
 * How `SqsServer` receives `SqsModule`'s queue registry: `Symbol.for`, a protocol two package copies share
 * (so its key keeps the name it was published under).
 */
export const SQS_QUEUE_REGISTRY_BINDING = Symbol.for('nestjs-idempotent-sqs:bind-dispatcher');
