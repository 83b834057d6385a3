import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';

/**
 * What a store that connects by itself (from a URL, options or a table name) refuses: to start with
 * nothing to connect to, and to serve once it was closed with the app that started it. Loaded by the
 * stores' own entry points only.
 */

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

/**
 * A connection left out: `undefined`, `null` or `''`, an unset (or empty) environment variable most often.
 * Refused at start-up, not when the store is built, so a store the tests override is never refused.
 */
export function isMissingConnection(value: unknown): value is undefined | null | '' {
  return value === undefined || value === null || value === '';
}

/** The start-up error of a store given nothing to connect to; `fix` says what to give instead. */
export function missingConnectionError(
  store: string,
  given: unknown,
  variable: string,
  fix: string,
): IdempotencyConfigurationError {
  return new IdempotencyConfigurationError(
    `${store}: nothing to connect to: it was given ${given === '' ? 'an empty string' : String(given)} ` +
      `(an unset environment variable, such as ${variable}?). ${fix}`,
  );
}
