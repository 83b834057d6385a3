import { IdempotencyError, withLabel } from '../common/sqs-idempotency.error';

/** The errors of store calls, raised by the claim that made them, or by a store at start-up. */

/** The store failed (threw or rejected) while claiming, completing or releasing a key. `code`: `'IDEMPOTENCY_STORE_FAILED'`. */
export class IdempotencyStoreError extends IdempotencyError {
  override readonly code: string = 'IDEMPOTENCY_STORE_FAILED';

  constructor(
    readonly operation:
      'tryAcquire' | 'markComplete' | 'forget' | 'extend' | 'runInTransaction' | 'runBatchInTransaction',
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
    /** The option that asked for the store at start-up, to drop or relax: by default `failFastOnStartup`. */
    option = 'drop failFastOnStartup',
  ) {
    super(
      `${store} could not reach ${address} at start-up (${cause instanceof Error ? cause.message : String(cause)}). ` +
        `Start it or fix the address; or ${option} to let the app start without it ` +
        '(records then fail closed until it answers, and succeed once it does, without a restart).',
    );
  }
}
