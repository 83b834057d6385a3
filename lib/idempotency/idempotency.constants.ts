/** The idempotency layer's DI tokens (symbols) and metadata keys (strings). */

/** Options given to `IdempotencyModule.forRoot()` / `forRootAsync()`, after validation. */
export const IDEMPOTENCY_MODULE_OPTIONS = Symbol('IDEMPOTENCY_MODULE_OPTIONS');

/** `@Idempotent()` options on a method or a class. */
export const IDEMPOTENT_METADATA = 'nestjs-idempotent-sqs:idempotent';

/** A handler method's event type reader, set by its host's decorator, so policies need not know the host. */
export const MESSAGE_TYPE_METADATA = 'nestjs-idempotent-sqs:message-type';

/**
 * A handler method's key path check, set by its host's decorator when it knows the event's class:
 * `(path) => why the path cannot exist on it, or undefined`. Read at start-up by the policies.
 */
export const MESSAGE_KEY_PATH_CHECK_METADATA = 'nestjs-idempotent-sqs:key-path-check';

/** `@EventPattern()` metadata key of `@nestjs/microservices`, read without importing that package. */
export const MICROSERVICES_PATTERN_METADATA = 'microservices:pattern';

/**
 * Marks an interceptor class (`IdempotencyInterceptor`, as its own static) whose claim the SQS hosts
 * may make without Nest's interceptor machinery (`lib/sqs/sqs-direct-call.ts`). A symbol read off
 * the class found in a handler's metadata, so the SQS side imports nothing of the idempotency code.
 */
export const SQS_DIRECT_CLAIM = Symbol('SQS_DIRECT_CLAIM');
