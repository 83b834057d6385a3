import { SqsIdempotencyError } from '../common/sqs-idempotency.error';

/**
 * A message that cannot be handled as sent (no body, not JSON, no route, invalid): it fails without
 * claiming a key and reaches the dead-letter queue, where it can be fixed and redriven.
 * `code`: `'SQS_INVALID_MESSAGE'`.
 */
export class InvalidSqsMessageError extends SqsIdempotencyError {
  override readonly code: string = 'SQS_INVALID_MESSAGE';

  constructor(
    readonly messageId: string,
    readonly queue: string,
    readonly reason: string,
    /** The event type the message named, when no handler takes it (the Center lists these). */
    readonly unroutedEventType?: string,
  ) {
    super(
      `Message ${messageId || '(no messageId)'} on queue "${queue}" is invalid: ${reason}. ` +
        'It was not handled and will reach the dead-letter queue after maxReceiveCount receives; fix the producer ' +
        'or the event class, then redrive it.',
    );
  }
}

/** A FIFO record not attempted because an earlier one of its order failed. `code`: `'SQS_FIFO_ORDER'`. */
export class SqsFifoOrderError extends SqsIdempotencyError {
  override readonly code: string = 'SQS_FIFO_ORDER';

  constructor(
    readonly messageId: string,
    readonly blockedBy: string,
    mode: string,
  ) {
    super(
      `Message ${messageId} was not attempted: message ${blockedBy} before it failed and ` +
        `fifoFailureMode is '${mode}'; it is redelivered in order.`,
    );
  }
}

/**
 * A record still running after `handleMessageTimeout`: it fails and comes back; its handler runs on,
 * its claim holding the key. `code`: `'SQS_RECORD_TIMEOUT'`.
 */
export class SqsRecordTimeoutError extends SqsIdempotencyError {
  override readonly code: string = 'SQS_RECORD_TIMEOUT';

  constructor(
    readonly messageId: string,
    readonly queue: string,
    readonly timeoutMs: number,
  ) {
    super(
      `Message ${messageId || '(no messageId)'} on queue "${queue}" was not done after ${timeoutMs} ms ` +
        '(handleMessageTimeout): it fails and is redelivered after its visibility timeout. Its handler runs on, ' +
        'and its idempotency claim holds the key until it ends; raise handleMessageTimeout if handlers need longer.',
    );
  }
}
