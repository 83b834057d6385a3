import { SqsIdempotencyError } from '../../common/sqs-idempotency.error';
import type { SqsSendFailure, SqsSentMessage } from './sqs-producer.options';

/**
 * Some messages of a send were not sent after their retries: `failed` lists each with its reason,
 * `sent` the others (resend only the failed ones). `code`: `'SQS_SEND_FAILED'`.
 */
export class SqsSendError<T = object> extends SqsIdempotencyError {
  override readonly code: string = 'SQS_SEND_FAILED';

  constructor(
    /** The queue URL or topic ARN. */
    readonly target: string,
    readonly failed: readonly SqsSendFailure<T>[],
    readonly sent: readonly SqsSentMessage<T>[],
  ) {
    const first = failed[0];
    super(
      `${failed.length} of ${failed.length + sent.length} message(s) could not be sent to ${target}` +
        (first ? `: #${first.index} ${first.code}: ${first.message}` : '') +
        (failed.length > 1 ? ` (and ${failed.length - 1} more, in .failed)` : '') +
        '. The others were sent (.sent); resend only the failed ones.',
    );
  }
}

/** An event the producer cannot write as its consumer would read it; nothing was sent. `code`: `'SQS_PRODUCER'`. */
export class SqsProducerError extends SqsIdempotencyError {
  override readonly code: string = 'SQS_PRODUCER';
}
