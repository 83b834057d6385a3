import type {
  SqsMessageAttributeValue,
  SqsRecordLike,
  SqsSdkMessage,
  SqsSdkMessageAttributeValue,
} from '../sqs-record.interface';

/**
 * An SDK message as the record both hosts share (a Lambda event record): attributes keep Lambda's
 * names and strings, binary message attributes become base64; the SDK message stays `ctx.raw`.
 */
export function toSqsRecord(message: SqsSdkMessage): SqsRecordLike {
  return {
    messageId: message.MessageId as string,
    receiptHandle: message.ReceiptHandle,
    // A message always has a body; if SQS ever sent none, the decoder fails the record naming it.
    body: message.Body as string,
    attributes: message.Attributes as SqsRecordLike['attributes'],
    messageAttributes: message.MessageAttributes && toRecordAttributes(message.MessageAttributes),
    md5OfBody: message.MD5OfBody,
    eventSource: 'aws:sqs',
  };
}

function toRecordAttributes(
  attributes: Record<string, SqsSdkMessageAttributeValue>,
): Record<string, SqsMessageAttributeValue> {
  const mapped: Record<string, SqsMessageAttributeValue> = {};
  for (const [name, value] of Object.entries(attributes)) {
    const attribute: SqsMessageAttributeValue = { dataType: value.DataType ?? 'String' };
    if (value.StringValue !== undefined) attribute.stringValue = value.StringValue;
    if (value.BinaryValue !== undefined) attribute.binaryValue = toBase64(value.BinaryValue);
    if (value.StringListValues?.length) attribute.stringListValues = value.StringListValues;
    if (value.BinaryListValues?.length) attribute.binaryListValues = value.BinaryListValues.map(toBase64);
    mapped[name] = attribute;
  }
  return mapped;
}

function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
