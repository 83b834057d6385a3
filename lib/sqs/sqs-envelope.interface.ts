/**
 * Envelopes: what SNS, EventBridge and S3 (and the CloudEvents format) wrap around an event. A queue
 * names its envelope; the event inside is handled as a raw message, and the envelope is on the context.
 */

/** An SNS notification (an SNS subscription without raw message delivery). */
export interface SqsSnsEnvelope {
  readonly kind: 'sns';
  /** SNS's id of the publication (a new one for every `Publish` call, retries included). */
  readonly messageId: string;
  readonly topicArn: string;
  /** `Subject` of the `Publish` call, when it had one. */
  readonly subject: string | undefined;
  /** When SNS accepted the publication (ISO 8601). */
  readonly timestamp: string;
  /** FIFO topics: the SNS sequence number. */
  readonly sequenceNumber: string | undefined;
  /** The publication's message attributes, as SNS writes them (`Binary` values in base64). */
  readonly messageAttributes: Readonly<Record<string, SqsSnsMessageAttribute>>;
}

/** A message attribute inside an SNS notification. */
export interface SqsSnsMessageAttribute {
  readonly Type: string;
  readonly Value: string;
}

/** An EventBridge event (a rule whose target is the queue). */
export interface SqsEventBridgeEnvelope {
  readonly kind: 'eventbridge';
  /** EventBridge's id of the event: the default idempotency key. */
  readonly id: string;
  /** The `detail-type`: the event type that routes it. */
  readonly detailType: string;
  readonly source: string;
  readonly account: string | undefined;
  readonly time: string | undefined;
  readonly region: string | undefined;
  readonly resources: readonly string[];
  readonly version: string | undefined;
}

/** An S3 event notification (one object event), delivered to the queue by S3 or through SNS. */
export interface SqsS3Envelope {
  readonly kind: 's3';
  /** `ObjectCreated:Put`, `ObjectRemoved:Delete`, ... */
  readonly eventName: string;
  readonly bucket: string;
  /** The object key, decoded (S3 URL-encodes it in notifications; the event keeps it as sent). */
  readonly objectKey: string;
  readonly eventTime: string | undefined;
  readonly region: string | undefined;
  /** Orders the events of one key; with the bucket and key, the default idempotency key. */
  readonly sequencer: string | undefined;
}

/** A CloudEvent in structured mode (the JSON event format of CloudEvents 1.0). */
export interface SqsCloudEventsEnvelope {
  readonly kind: 'cloudevents';
  /** The event's id: the default idempotency key. */
  readonly id: string;
  readonly source: string;
  /** The event type that routes it. */
  readonly type: string;
  readonly specversion: string;
  readonly subject: string | undefined;
  readonly time: string | undefined;
  readonly datacontenttype: string | undefined;
  readonly dataschema: string | undefined;
  /** Extension attributes (every other top-level attribute). */
  readonly extensions: Readonly<Record<string, unknown>>;
}

/** What an envelope said about the event inside it; `ctx.envelopes` lists them, outermost first. */
export type SqsEnvelope = SqsSnsEnvelope | SqsEventBridgeEnvelope | SqsS3Envelope | SqsCloudEventsEnvelope;

/** The envelopes the decoding stage opens. */
export type SqsEnvelopeKind = SqsEnvelope['kind'];

/**
 * A queue's envelope: `'none'` (default), one kind (any other message is invalid), a list outermost
 * first (`['sns', 's3']`), or `'auto'` (a body with every field of a kind is opened as it).
 */
export type SqsEnvelopeOption = 'none' | 'auto' | SqsEnvelopeKind | readonly SqsEnvelopeKind[];

/** The message inside an envelope: text to decode, a value already parsed, or both (`'auto'` parsed it). */
export interface SqsInnerMessage {
  readonly text?: string;
  readonly value?: unknown;
}

/** What a reader found in a body. */
export interface SqsOpenedEnvelope {
  readonly envelope: SqsEnvelope;
  readonly inner: SqsInnerMessage;
  /** The type the envelope names (EventBridge `detail-type`, CloudEvents `type`, `s3:TestEvent`). */
  readonly type?: string;
  /** The id the envelope gives the event (the default idempotency key). */
  readonly key?: string;
  /** Set when there is nothing to handle (S3's `s3:TestEvent`): the record is acked as skipped. */
  readonly skip?: string;
}

/** A body whose envelopes are open: what the innermost said, and every envelope, outermost first (none for a raw message). */
export interface SqsOpenedMessage extends Omit<SqsOpenedEnvelope, 'envelope'> {
  readonly envelopes: readonly SqsEnvelope[];
}

/** Reads one kind of envelope. */
export interface SqsEnvelopeReader {
  readonly kind: SqsEnvelopeKind;
  /** For `'auto'`: whether the body has every field this envelope always has. */
  recognizes(body: Record<string, unknown>): boolean;
  /** Opens the envelope; throws an `Error` whose message is the reason when the body is not one. */
  open(body: Record<string, unknown>): SqsOpenedEnvelope;
}
