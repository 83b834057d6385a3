/** The idempotency layer's DI tokens (symbols) and metadata keys (strings). */

/** Options given to `IdempotencyModule.forRoot()` / `forRootAsync()`, after validation. */
export const IDEMPOTENCY_MODULE_OPTIONS = Symbol('IDEMPOTENCY_MODULE_OPTIONS');

/** The module's `stats` options, read; `null` when it has none (the counters then run only with the Center). */
export const IDEMPOTENCY_STATS_OPTIONS = Symbol('IDEMPOTENCY_STATS_OPTIONS');

/**
 * `IdempotentHandlerRegistry` under a token, so that a host checks its handlers' policies (the SQS key-path
 * check, `SqsTestClient.startupWarnings`) without loading the policies' code where no `IdempotencyModule` is.
 */
export const IDEMPOTENT_HANDLER_POLICIES = Symbol('IDEMPOTENT_HANDLER_POLICIES');

/** `@Idempotent()` options on a method or a class. */
export const IDEMPOTENT_METADATA = 'nestjs-idempotent-sqs:idempotent';

/** A handler method's event type reader, set by its host's decorator, so policies need not know the host. */
export const MESSAGE_TYPE_METADATA = 'nestjs-idempotent-sqs:message-type';

/**
 * Marks the interceptor whose claim the SQS hosts may make without Nest's interceptor machinery
 * (`lib/sqs/nest/sqs-direct-call.ts`): read off the class, so the SQS side imports no idempotency code.
 */
export const SQS_DIRECT_CLAIM = Symbol('SQS_DIRECT_CLAIM');

/**
 * Where a host context keeps the payload as it arrived (decoded, before a class was mapped over it):
 * what payload fingerprints hash. `SqsContext` sets it; on other contexts the handler's data is the
 * payload as it arrived. A symbol, so that no transport's own context field is read by mistake.
 */
export const ARRIVED_PAYLOAD = Symbol('ARRIVED_PAYLOAD');

/**
 * Marks the context of a batch handler's call (`SqsBatchContext`): its claims are made per event by the
 * batch runner, so `@Idempotent()`'s interceptor and the key/transaction parameters step aside for it.
 */
export const BATCH_HANDLER_CALL = Symbol('BATCH_HANDLER_CALL');

/**
 * `IdempotencyService` under a token, so that the SQS batch handlers reach its batch claims
 * (`batch-handler.claims.ts`) without loading the service's code where no `IdempotencyModule` is.
 */
export const IDEMPOTENT_BATCH_CLAIMS = Symbol('IDEMPOTENT_BATCH_CLAIMS');
