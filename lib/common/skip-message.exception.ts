import { IntrinsicException } from '@nestjs/common';

/**
 * Throw it anywhere on a message's path to ack the message without doing its work ("already
 * shipped"). A skipped record is a success: deleted, never in `batchItemFailures`, its key completed,
 * logged `status=SKIPPED`. Not an `SqsIdempotencyError`, so a blanket catch of those cannot swallow an
 * ack. `code`: `'SKIP_MESSAGE'`.
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
