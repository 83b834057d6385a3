/**
 * One SQS message as both hosts see it: a Lambda event's record (the polling host maps the SDK's
 * `Message` onto it). Structural, and assignable both ways with `aws-lambda`'s types (a type test
 * holds it), hence no index signature on the attributes.
 */

/** System attributes, PascalCase as SQS names them. Values are strings, as SQS sends them. */
export interface SqsRecordAttributes {
  ApproximateReceiveCount?: string;
  SentTimestamp?: string;
  SenderId?: string;
  ApproximateFirstReceiveTimestamp?: string;
  MessageGroupId?: string;
  MessageDeduplicationId?: string;
  SequenceNumber?: string;
  AWSTraceHeader?: string;
  /** Set on messages redriven from a dead-letter queue. */
  DeadLetterQueueSourceArn?: string;
}

/** A message attribute, as a Lambda event carries it (`binaryValue` is base64). */
export interface SqsMessageAttributeValue {
  dataType: string;
  stringValue?: string;
  binaryValue?: string;
  stringListValues?: string[];
  binaryListValues?: string[];
}

/** One SQS message (an SQS Lambda event record). */
export interface SqsRecordLike {
  messageId: string;
  receiptHandle?: string;
  body: string;
  attributes?: SqsRecordAttributes;
  messageAttributes?: Record<string, SqsMessageAttributeValue>;
  md5OfBody?: string;
  md5OfMessageAttributes?: string;
  eventSource?: string;
  eventSourceARN?: string;
  awsRegion?: string;
}

/** A record with every field an event source mapping sets (`buildSqsRecord()`): an `aws-lambda` `SQSRecord`. */
export interface SqsLambdaRecord extends SqsRecordLike {
  receiptHandle: string;
  attributes: SqsRecordAttributes & {
    ApproximateReceiveCount: string;
    SentTimestamp: string;
    SenderId: string;
    ApproximateFirstReceiveTimestamp: string;
  };
  messageAttributes: Record<string, SqsMessageAttributeValue>;
  md5OfBody: string;
  eventSource: string;
  eventSourceARN: string;
  awsRegion: string;
}

/** The SDK's `Message`, structurally, so the types compile without the SDK. */
export interface SqsSdkMessage {
  MessageId?: string;
  ReceiptHandle?: string;
  MD5OfBody?: string;
  Body?: string;
  Attributes?: Partial<Record<string, string>>;
  MessageAttributes?: Record<string, SqsSdkMessageAttributeValue>;
}

/** The SDK's `MessageAttributeValue`, structurally. */
export interface SqsSdkMessageAttributeValue {
  DataType: string | undefined;
  StringValue?: string;
  BinaryValue?: Uint8Array;
  StringListValues?: string[];
  BinaryListValues?: Uint8Array[];
}
