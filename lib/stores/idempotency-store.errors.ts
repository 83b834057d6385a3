import { IdempotencyConfigurationError, IdempotencyError, withLabel } from '../common/sqs-idempotency.error';

/** The errors of store calls, raised by the claim that made them, or by a store at start-up. */

/** The store failed (threw or rejected) while claiming, completing or releasing a key. `code`: `'IDEMPOTENCY_STORE_FAILED'`. */
export class IdempotencyStoreError extends IdempotencyError {
  override readonly code: string = 'IDEMPOTENCY_STORE_FAILED';

  constructor(
    readonly operation:
      'tryAcquire' | 'tryAcquireWithFingerprint' | 'markComplete' | 'forget' | 'extend' | 'runInTransaction',
    readonly key: string,
    override readonly cause: unknown,
    readonly messageLabel?: string,
  ) {
    super(
      withLabel(
        messageLabel,
        `${messageLabel ? 'The i' : 'I'}dempotency store ${operation}("${key}") failed: ` +
          `${(cause instanceof Error ? cause.message : String(cause)).replace(/\.+$/, '')}. ` +
          (operation === 'runInTransaction'
            ? 'The record fails and will be redelivered: its transaction did not commit (or, if the commit reached ' +
              'the database before the connection failed, the redelivery finds the key completed).'
            : 'The record fails closed (the handler did not run unclaimed) and will be redelivered.'),
      ),
    );
  }
}

/**
 * A store told to fail fast (`failFastOnStartup`) could not be reached at start-up: the app does not
 * start (without it, records fail closed until the store answers). `code`: `'IDEMPOTENCY_STORE_UNAVAILABLE'`.
 */
export class IdempotencyStoreUnavailableError extends IdempotencyError {
  override readonly code: string = 'IDEMPOTENCY_STORE_UNAVAILABLE';

  constructor(
    readonly store: string,
    readonly address: string,
    override readonly cause: unknown,
  ) {
    super(
      `${store} could not reach ${address} at start-up (${cause instanceof Error ? cause.message : String(cause)}). ` +
        'Start it or fix the address; or drop failFastOnStartup to let the app start without it ' +
        '(records then fail closed until it answers, and succeed once it does, without a restart).',
    );
  }
}

/**
 * A store that connects by itself (from a URL or options) was closed when the application that started
 * it shut down, and another application (or a record after the shutdown) used it: the store belongs to
 * one application. Raised at start-up, or by the call. `code`: `'IDEMPOTENCY_STORE_CLOSED'`.
 */
export class IdempotencyStoreClosedError extends IdempotencyConfigurationError {
  override readonly code: string = 'IDEMPOTENCY_STORE_CLOSED';

  constructor(
    readonly store: string,
    readonly address: string,
  ) {
    super(
      `${store} (${address}) is closed: the application that started it shut down (app.close(), ` +
        'moduleRef.close() or a shutdown signal) and closed its connection. A store that connects by itself ' +
        'belongs to the one application that starts it; built in a module decorator ' +
        `(IdempotencyModule.forRoot({ store: new ${store}(...) })), it is one instance shared by every ` +
        "application made from that module, each test's included. Build one per application: " +
        `IdempotencyModule.forRootAsync({ useFactory: () => ({ store: new ${store}(...), service }) }) runs its ` +
        'factory for each (docs/testing.md, "An app on a shared store").',
    );
  }
}
