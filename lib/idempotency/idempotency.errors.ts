import { IdempotencyError, withLabel } from '../common/sqs-idempotency.error';

/**
 * Another attempt holds the key: this copy fails on purpose (that attempt may still crash, and acking
 * it would lose the message) and is redelivered later. `code`: `'IDEMPOTENCY_IN_PROGRESS'`.
 */
export class IdempotencyInProgressError extends IdempotencyError {
  override readonly code: string = 'IDEMPOTENCY_IN_PROGRESS';

  constructor(
    readonly key: string,
    readonly messageLabel?: string,
  ) {
    super(
      withLabel(
        messageLabel,
        `Idempotency key "${key}" is being processed by another attempt; ` +
          'this copy fails on purpose and will be redelivered after the visibility timeout.',
      ),
    );
  }
}

/**
 * The key is held for a payload with another fingerprint (a key reused by a producer bug or a forged
 * message): neither run nor acked, it reaches the dead-letter queue. `code`: `'IDEMPOTENCY_FINGERPRINT_MISMATCH'`.
 */
export class IdempotencyFingerprintMismatchError extends IdempotencyError {
  override readonly code: string = 'IDEMPOTENCY_FINGERPRINT_MISMATCH';

  constructor(
    /** The store key both messages claim. */
    readonly key: string,
    /** The id of this message, when the host knows it. */
    readonly messageId: string | undefined,
    /** The id of the message whose claim holds the key, when its store kept it. */
    readonly claimedByMessageId: string | undefined,
    /** Whether that claim is completed or still in flight. */
    readonly claimState: 'COMPLETED' | 'IN_PROGRESS',
    readonly messageLabel?: string,
  ) {
    const holder =
      claimedByMessageId === undefined
        ? 'a message whose id was not recorded'
        : `message ${claimedByMessageId}`;
    super(
      withLabel(
        messageLabel,
        `Idempotency key "${key}" is ${claimState === 'COMPLETED' ? 'completed' : 'being processed'} for ${holder}, ` +
          'whose payload has another fingerprint: the key was reused for a different payload (a producer bug, or a ' +
          'forged message). This copy is not run and not acked as a duplicate; it fails, and reaches the dead-letter ' +
          'queue after maxReceiveCount. Compare the two messages: give distinct events distinct keys, or narrow ' +
          '@Idempotent({ fingerprint }) to the fields that identify the event.',
      ),
    );
  }
}

/** The payload has no usable idempotency key and `requireKey` is on (the default). `code`: `'IDEMPOTENCY_KEY_MISSING'`. */
export class MissingIdempotencyKeyError extends IdempotencyError {
  override readonly code: string = 'IDEMPOTENCY_KEY_MISSING';

  constructor(
    readonly eventType: string,
    readonly source: string,
    readonly reason: string,
    readonly messageLabel?: string,
  ) {
    super(
      withLabel(
        messageLabel,
        `No idempotency key for ${eventType}: ${source} ${reason}. Fix the producer, point @Idempotent() at the ` +
          'right field, or set requireKey: false to process without dedup.',
      ),
    );
  }
}
