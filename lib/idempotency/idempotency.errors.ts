import { SqsIdempotencyError } from '../sqs-idempotency.error';

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
 * Another attempt holds the claim on this key. The record fails on purpose: that attempt may still
 * crash, and acking this copy would then lose the message. SQS redelivers it after the visibility
 * timeout, by which time the first attempt has either completed (the copy is acked as a duplicate)
 * or released the key (the copy runs). `code`: `'IDEMPOTENCY_IN_PROGRESS'`.
 */
export class IdempotencyInProgressError extends IdempotencyError {
  override readonly code: string = 'IDEMPOTENCY_IN_PROGRESS';

  constructor(
    readonly key: string,
    readonly messageLabel?: string,
  ) {
    super(
      `${messageLabel ? `${capitalize(messageLabel)}: i` : 'I'}dempotency key "${key}" is being processed by another attempt; ` +
        'this copy fails on purpose and will be redelivered after the visibility timeout.',
    );
  }
}

/**
 * The key is held (completed, or in flight) by a message whose payload had another fingerprint: the
 * same key was reused for a different payload, by a producer bug or a forged message. The record
 * fails: it is neither run nor acked as a duplicate, and after `maxReceiveCount` receives it reaches
 * the queue's dead-letter queue, where both messages can be compared. Raised only for handlers with
 * a `fingerprint` option. `code`: `'IDEMPOTENCY_FINGERPRINT_MISMATCH'`.
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
      `${messageLabel ? `${capitalize(messageLabel)}: i` : 'I'}dempotency key "${key}" is ` +
        `${claimState === 'COMPLETED' ? 'completed' : 'being processed'} for ${holder}, whose payload has another ` +
        'fingerprint: the key was reused for a different payload (a producer bug, or a forged message). This copy is ' +
        'not run and not acked as a duplicate; it fails, and reaches the dead-letter queue after maxReceiveCount. ' +
        'Compare the two messages: give distinct events distinct keys, or narrow @Idempotent({ fingerprint }) to the ' +
        'fields that identify the event.',
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
      `${messageLabel ? `${capitalize(messageLabel)}: n` : 'N'}o idempotency key for ${eventType}: ${source} ${reason}. ` +
        'Fix the producer, point @Idempotent() at the right field, or set requireKey: false to process without dedup.',
    );
  }
}

/**
 * Raised at bootstrap when the setup cannot keep the contract: the module options, an `@Idempotent()`
 * declaration, a shared store without a service identity, or (with `serverCheck: 'fail'`) a Redis
 * that would forget completed keys early. `code`: `'IDEMPOTENCY_CONFIGURATION'`.
 */
export class IdempotencyConfigurationError extends IdempotencyError {
  override readonly code: string = 'IDEMPOTENCY_CONFIGURATION';
}

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
      `${messageLabel ? `${capitalize(messageLabel)}: the i` : 'I'}dempotency store ${operation}("${key}") failed: ` +
        `${sentence(cause instanceof Error ? cause.message : String(cause))} ` +
        (operation === 'runInTransaction'
          ? 'The record fails and will be redelivered: its transaction did not commit (or, if the commit reached the ' +
            'database before the connection failed, the redelivery finds the key completed).'
          : 'The record fails closed (the handler did not run unclaimed) and will be redelivered.'),
    );
  }
}

/**
 * The store could not be reached when the application started, and the store was told to fail fast
 * (`RedisIdempotencyStore`'s `failFastOnStartup`): the app does not start. Without that option the
 * app starts anyway and records fail closed until the store answers. `code`: `'IDEMPOTENCY_STORE_UNAVAILABLE'`.
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

/** `text` ending in exactly one period, whether or not it had one (no "failed: ... limit.."). */
function sentence(text: string): string {
  return `${text.replace(/\.+$/, '')}.`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
