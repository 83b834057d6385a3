import { IntrinsicException } from '@nestjs/common';

/**
 * The root of every error this library raises (`catch (e) { if (e instanceof SqsIdempotencyError) }`);
 * `SkipMessageException` is deliberately not one, so such a catch cannot swallow an ack. An
 * `IntrinsicException`, so Nest does not log it again beside the record's own log line.
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
 * `SqsModule`, `SqsServer` or the Lambda host is set up so that it cannot work: the app does not
 * start, and the message says what to fix. `code`: `'SQS_CONFIGURATION'`.
 */
export class SqsConfigurationError extends SqsIdempotencyError {
  override readonly code: string = 'SQS_CONFIGURATION';
}

/** The root of the idempotency contract's errors. `code`: `'IDEMPOTENCY_ERROR'`. */
export class IdempotencyError extends SqsIdempotencyError {
  override readonly code: string = 'IDEMPOTENCY_ERROR';
}

/**
 * The setup cannot keep the contract (module options, an `@Idempotent()` declaration, a shared store
 * without a service identity, a Redis that would forget keys): raised at bootstrap.
 * `code`: `'IDEMPOTENCY_CONFIGURATION'`.
 */
export class IdempotencyConfigurationError extends IdempotencyError {
  override readonly code: string = 'IDEMPOTENCY_CONFIGURATION';
}

/** `sentence` about `label` (`"Message m1 on queue orders: idempotency key ..."`), or alone. */
export function withLabel(label: string | undefined, sentence: string): string {
  return label
    ? `${label.charAt(0).toUpperCase()}${label.slice(1)}: ${sentence.charAt(0).toLowerCase()}${sentence.slice(1)}`
    : sentence;
}
