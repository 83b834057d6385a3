import type {
  SqsEnvelopeReader,
  SqsOpenedEnvelope,
  SqsSnsMessageAttribute,
} from '../../sqs-envelope.interface';
import { isObject } from '../../sqs-body.decoder';
import { notEnvelope, requireString, stringField } from './envelope-fields';

const WHAT = 'an SNS notification';

/**
 * An SNS notification (no raw delivery): the event is `Message`; its attributes are in the body, and
 * `ctx.messageAttribute()` reads them as it reads SQS's.
 */
export const snsEnvelope: SqsEnvelopeReader = {
  kind: 'sns',

  recognizes: (body) =>
    body.Type === 'Notification' &&
    stringField(body, 'MessageId') !== undefined &&
    typeof body.TopicArn === 'string' &&
    body.TopicArn.startsWith('arn:') &&
    body.TopicArn.includes(':sns:') &&
    typeof body.Message === 'string',

  open(body): SqsOpenedEnvelope {
    if (body.Type !== 'Notification') {
      const expected = '"Notification" (a raw delivery? then the queue takes no envelope)';
      throw notEnvelope(WHAT, 'Type', body.Type, expected);
    }
    const message = body.Message;
    if (typeof message !== 'string') throw notEnvelope(WHAT, 'Message', message, 'a string');
    return {
      envelope: {
        kind: 'sns',
        messageId: requireString(body, 'MessageId', WHAT),
        topicArn: requireString(body, 'TopicArn', WHAT),
        subject: stringField(body, 'Subject'),
        timestamp: stringField(body, 'Timestamp') ?? '',
        sequenceNumber: stringField(body, 'SequenceNumber'),
        messageAttributes: readAttributes(body.MessageAttributes),
      },
      inner: { text: message },
    };
  },
};

function readAttributes(value: unknown): Record<string, SqsSnsMessageAttribute> {
  const attributes: Record<string, SqsSnsMessageAttribute> = {};
  if (!isObject(value)) return attributes;
  for (const [name, attribute] of Object.entries(value)) {
    if (isObject(attribute) && typeof attribute.Type === 'string' && typeof attribute.Value === 'string') {
      attributes[name] = { Type: attribute.Type, Value: attribute.Value };
    }
  }
  return attributes;
}
