import { SqsIdempotencyError } from '../common/sqs-idempotency.error';

/**
 * A message that cannot be handled as sent: no body, not JSON, not an object, no route, or an
 * event that fails validation. The record fails without claiming any key, so SQS redelivers it
 * and, after `maxReceiveCount`, moves it to the queue's dead-letter queue, where it can be fixed
 * and redriven. The message says which message, on which queue, and what to do.
 * `code`: `'SQS_INVALID_MESSAGE'`.
 */
export class InvalidSqsMessageError extends SqsIdempotencyError {
  override readonly code: string = 'SQS_INVALID_MESSAGE';

  constructor(
    readonly messageId: string,
    readonly queue: string,
    readonly reason: string,
  ) {
    super(
      `Message ${messageId || '(no messageId)'} on queue "${queue}" is invalid: ${reason}. ` +
        'It was not handled and will reach the dead-letter queue after maxReceiveCount receives; fix the producer ' +
        'or the event class, then redrive it.',
    );
  }
}

/**
 * A FIFO record that was not attempted because an earlier record it must follow failed
 * (`fifoFailureMode`): running it would break the order of its group. It is redelivered with them.
 * `code`: `'SQS_FIFO_ORDER'`.
 */
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
 * A record still running after the polling host's `handleMessageTimeout`: it fails and comes back
 * after its visibility timeout. Its handler is not stopped (JavaScript cannot stop it), and an
 * `@Idempotent()` handler's claim holds the key until it ends, so the redelivery meets it as in
 * flight rather than running twice. `code`: `'SQS_RECORD_TIMEOUT'`.
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

/**
 * How the reason of a message naming a type no handler routes begins: the router writes it, and
 * `unroutedEventTypeOf` reads it back. Both live here, beside the error that carries the reason,
 * so the sentence and its reader change together (and the Center's journal reads it without
 * reaching up into the router).
 */
export const NO_HANDLER_FOR_TYPE = 'no handler for event type ';
const UNROUTED_TYPE = /^no handler for event type ("(?:[^"\\]|\\.)*") on queue /;

/**
 * The event type a message named when no handler routes it, read back from the reason the router
 * gave (`InvalidSqsMessageError.reason`), for the Idempotency Center's list of types that arrived
 * with no handler. Only string types count (a number or an object is not a routable-looking type).
 */
export function unroutedEventTypeOf(reason: string): string | undefined {
  if (!reason.startsWith(NO_HANDLER_FOR_TYPE)) return undefined;
  const quoted = UNROUTED_TYPE.exec(reason)?.[1];
  if (quoted === undefined) return undefined;
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return undefined;
  }
}
