import { IntrinsicException } from '@nestjs/common';

/**
 * Throw it from a handler (or a guard, interceptor or service) to acknowledge a message without
 * doing its work: "already shipped", "for another tenant", "obsolete".
 *
 * A skipped record is a success: it is deleted, never listed in `batchItemFailures`, does not halt
 * its FIFO group, still marks its idempotency key completed, and is logged with `status=SKIPPED`.
 *
 * It is deliberately not an `IdempotencyError`, so a blanket `instanceof IdempotencyError` catch
 * cannot swallow an ack. It extends Nest's `IntrinsicException` so Nest does not log it as an error.
 * `code`: `'SKIP_MESSAGE'`, like the library's errors.
 *
 * @example
 * ```ts
 * if (await this.orders.alreadyShipped(event.orderId)) throw new SkipMessageException('already shipped');
 * ```
 */
export class SkipMessageException extends IntrinsicException {
  /** Stable across versions and package copies, like the library's errors' `code`. */
  readonly code: string = 'SKIP_MESSAGE';

  constructor(readonly reason = 'skipped by the handler') {
    super(reason);
    this.name = 'SkipMessageException';
  }
}

/** True for a `SkipMessageException`, also across duplicated copies of this package. */
export function isSkipMessageException(error: unknown): error is SkipMessageException {
  return (
    error instanceof SkipMessageException ||
    (error instanceof Error && error.name === 'SkipMessageException' && 'reason' in error)
  );
}
