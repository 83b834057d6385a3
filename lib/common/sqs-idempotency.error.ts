import { IntrinsicException } from '@nestjs/common';

/**
 * The root of every error this library raises, so `catch (e) { if (e instanceof SqsIdempotencyError) }`
 * finds them all: idempotency errors (`IdempotencyError` and its kinds), invalid messages
 * (`InvalidSqsMessageError`), FIFO order (`SqsFifoOrderError`), record timeouts, producer errors,
 * missing peers (`MissingPeerDependencyError`) and configuration errors (`SqsConfigurationError`,
 * `IdempotencyConfigurationError`). `SkipMessageException` is deliberately not one of them: it is
 * an ack, and such a blanket catch must not be able to swallow it.
 *
 * It extends Nest's `IntrinsicException` so Nest's default exception handler does not log it a
 * second time: the record pipeline writes one log line per record with the outcome.
 *
 * Every error of the library carries a stable `code` (`'SQS_IDEMPOTENCY_ERROR'` here): branch on it
 * where an app may hold two copies of this package, whose classes `instanceof` tells apart.
 */
export class SqsIdempotencyError extends IntrinsicException {
  /** Stable across versions and package copies, one per error class (`'IDEMPOTENCY_IN_PROGRESS'`, ...). */
  readonly code: string = 'SQS_IDEMPOTENCY_ERROR';

  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * Raised where `SqsModule`, `SqsServer` or the Lambda host is set up with options or declarations
 * that cannot work (a bad option value, one event type on two classes, a queue without a url where
 * polling was asked for): the app does not start, and the message says what to fix.
 * `code`: `'SQS_CONFIGURATION'`.
 */
export class SqsConfigurationError extends SqsIdempotencyError {
  override readonly code: string = 'SQS_CONFIGURATION';
}

/**
 * Base class of the errors of the idempotency contract (a key in flight, a fingerprint mismatch, a
 * missing key, the store failing, its configuration), so `catch (e) { if (e instanceof
 * IdempotencyError) }` finds them. Message and transport errors are not idempotency errors: catch
 * `SqsIdempotencyError` for every error of the library. `code`: `'IDEMPOTENCY_ERROR'`.
 */
export class IdempotencyError extends SqsIdempotencyError {
  override readonly code: string = 'IDEMPOTENCY_ERROR';
}

/**
 * Raised at bootstrap when the setup cannot keep the contract: the module options, an `@Idempotent()`
 * declaration, a shared store without a service identity, or (with `serverCheck: 'fail'`) a Redis
 * that would forget completed keys early. `code`: `'IDEMPOTENCY_CONFIGURATION'`.
 */
export class IdempotencyConfigurationError extends IdempotencyError {
  override readonly code: string = 'IDEMPOTENCY_CONFIGURATION';
}

/**
 * `sentence` as a message about `label` (`"Message m1 on queue orders"`): `"Message m1 on queue
 * orders: idempotency key ..."`; the sentence alone without one.
 */
export function withLabel(label: string | undefined, sentence: string): string {
  return label
    ? `${label.charAt(0).toUpperCase()}${label.slice(1)}: ${sentence.charAt(0).toLowerCase()}${sentence.slice(1)}`
    : sentence;
}
