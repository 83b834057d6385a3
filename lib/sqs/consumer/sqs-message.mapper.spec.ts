import type { Message } from '@aws-sdk/client-sqs';
import { SqsContext } from '../sqs-context';
import { toSqsRecord } from './sqs-message.mapper';

describe('toSqsRecord', () => {
  const message: Message = {
    MessageId: 'm-1',
    ReceiptHandle: 'rh-1',
    MD5OfBody: 'md5',
    Body: '{"type":"order_created"}',
    Attributes: { ApproximateReceiveCount: '3', MessageGroupId: 'g-1', SentTimestamp: '1700000000000' },
    MessageAttributes: {
      eventType: { DataType: 'String', StringValue: 'order_created' },
      blob: { DataType: 'Binary', BinaryValue: new Uint8Array([1, 2, 255]) },
    },
  };

  it('gives the context what a Lambda record gives it', () => {
    const record = toSqsRecord(message);
    const context = new SqsContext(record, 'orders', message);
    expect(context.messageId).toBe('m-1');
    expect(context.body).toBe('{"type":"order_created"}');
    expect(context.receiveCount).toBe(3);
    expect(context.groupId).toBe('g-1');
    expect(context.attributes.SentTimestamp).toBe('1700000000000');
    expect(context.messageAttribute('eventType')).toBe('order_created');
    expect(context.raw).toBe(message);
    expect(record).toMatchObject({ receiptHandle: 'rh-1', md5OfBody: 'md5', eventSource: 'aws:sqs' });
  });

  it('turns binary attributes into base64, as Lambda delivers them', () => {
    const record = toSqsRecord(message);
    expect(record.messageAttributes?.blob).toEqual({ dataType: 'Binary', binaryValue: 'AQL/' });
  });

  it('reads a binary value that is a view into a larger buffer', () => {
    const backing = new Uint8Array([9, 9, 1, 2, 255, 9]);
    const record = toSqsRecord({
      MessageId: 'm-2',
      Body: '{}',
      MessageAttributes: { blob: { DataType: 'Binary', BinaryValue: backing.subarray(2, 5) } },
    });
    expect(record.messageAttributes?.blob.binaryValue).toBe('AQL/');
  });

  it('leaves absent attributes absent (the context answers with defaults)', () => {
    const record = toSqsRecord({ MessageId: 'm-3', Body: '{}' });
    expect(record.attributes).toBeUndefined();
    expect(record.messageAttributes).toBeUndefined();
    expect(new SqsContext(record, 'orders').receiveCount).toBe(1);
  });

  it('maps each attribute value to the keys Lambda gives it, and no key for a value it lacks', () => {
    const record = toSqsRecord({
      MessageId: 'm-4',
      Body: '{}',
      MessageAttributes: {
        bare: {} as never,
        blob: { DataType: 'Binary', BinaryValue: new Uint8Array([1]) },
        tags: { DataType: 'String', StringListValues: ['a', 'b'] },
        none: { DataType: 'String', StringValue: 'x', StringListValues: [], BinaryListValues: [] },
      },
    });
    expect(record.messageAttributes).toStrictEqual({
      bare: { dataType: 'String' },
      blob: { dataType: 'Binary', binaryValue: 'AQ==' },
      tags: { dataType: 'String', stringListValues: ['a', 'b'] },
      none: { dataType: 'String', stringValue: 'x' },
    });
  });
});
