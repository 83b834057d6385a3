/**
 * The shape of one SQS message as both hosts see it: the record of an SQS Lambda event. The polling
 * host maps the SDK's `Message` onto it, so parsing, routing and the context have one input type.
 *
 * Declared structurally, so the package never depends on `@types/aws-lambda` at run time, and kept
 * assignable both ways with it: an `SQSEvent` is an `SqsLambdaEvent`, and a record built by
 * `buildSqsRecord()` is an `SQSRecord` (a type test in the suite holds both). Hence no index
 * signature on the attributes: `aws-lambda` declares `SQSRecordAttributes` as an interface without
 * one, and an interface is only assignable to an index signature it declares itself.
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

/**
 * A record with every field an SQS event source mapping sets, as `buildSqsRecord()` makes it:
 * assignable to `aws-lambda`'s `SQSRecord`.
 */
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

/**
 * A message as `ReceiveMessage` of `@aws-sdk/client-sqs` returns it (its `Message` type), declared
 * structurally so the package's types compile without the SDK.
 */
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
