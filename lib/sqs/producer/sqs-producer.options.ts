/** A message attribute to send: a string, a number, bytes, or the SDK's own shape. */
export type SqsAttributeInput =
  string | number | Uint8Array | { DataType: string; StringValue?: string; BinaryValue?: Uint8Array };

/** Options of one `send()` / `sendBatch()` call. */
export interface SqsSendOptions<T = object> {
  /** FIFO `MessageGroupId`: a string or a function of the event. */
  groupId?: string | ((event: T) => string);
  /** FIFO `MessageDeduplicationId`. Default: the event's idempotency key, as this app's consumer computes it. */
  deduplicationId?: string | ((event: T) => string);
  /** Seconds before the message becomes visible, 0 to 900 (standard queues). */
  delaySeconds?: number;
  /** Message attributes, besides the one a `{ attribute }` discriminator adds. */
  messageAttributes?: Record<string, SqsAttributeInput>;
}

/** Options of one `publish()` / `publishBatch()` call. */
export interface SnsPublishOptions<T = object> extends Omit<SqsSendOptions<T>, 'delaySeconds'> {
  /** The notification's `Subject`. */
  subject?: string;
}

/** One message sent. */
export interface SqsSentMessage<T = object> {
  /** The event, as given. */
  readonly event: T;
  /** Its position in the call. */
  readonly index: number;
  /** SQS's (or SNS's) id of the message. */
  readonly messageId: string;
  /** FIFO queues and topics. */
  readonly sequenceNumber?: string;
}

/** One message that could not be sent, after the retries it deserved. */
export interface SqsSendFailure<T = object> {
  readonly event: T;
  readonly index: number;
  /** SQS's or SNS's error code (`InvalidMessageContents`, `ThrottlingException`, ...), or the error's name. */
  readonly code: string;
  readonly message: string;
  /** True when the message itself was refused (retrying cannot help). */
  readonly senderFault: boolean;
  /** How many times it was tried. */
  readonly attempts: number;
}
