/**
 * The shape of one SQS message as both hosts see it: the record of an SQS Lambda event. The polling
 * host maps the SDK's `Message` onto it, so parsing, routing and the context have one input type.
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
  [name: string]: string | undefined;
}

/** A message attribute, as a Lambda event carries it. */
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
  eventSource?: string;
  eventSourceARN?: string;
  awsRegion?: string;
}
