import { cloudEventsEnvelope } from './cloudevents.envelope';
import { notEnvelope, requireString, stringField } from './envelope-fields';
import { eventBridgeEnvelope } from './eventbridge.envelope';
import { s3Envelope } from './s3.envelope';
import { snsEnvelope } from './sns.envelope';

/**
 * The SNS, EventBridge, S3 and CloudEvents readers alone: what each recognizes, what it puts on the context, and
 * the reason it gives for a body that only looks like its envelope (the record's error, which the user
 * reads to fix the producer). test/sqs-envelopes.e2e-spec.ts runs them through an app.
 */

/** An EventBridge event as AWS delivers one to SQS (a rule's target). */
function eventBridgeEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    version: '0',
    id: 'eb-1',
    'detail-type': 'OrderPlaced',
    source: 'shop.orders',
    account: '123456789012',
    time: '2026-12-05T10:00:00Z',
    region: 'eu-west-1',
    resources: ['arn:aws:shop:order/1'],
    detail: { orderId: 'o-1' },
    ...overrides,
  };
}

/** A structured-mode CloudEvent. */
function cloudEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    specversion: '1.0',
    id: 'ce-1',
    source: '/shop/orders',
    type: 'order.placed',
    ...overrides,
  };
}

/** An SNS notification as SNS delivers one to a queue without raw message delivery. */
function snsNotification(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    Type: 'Notification',
    MessageId: '9f1b8c2e-6d4a-5b7e-8f3c-1a2b3c4d5e6f',
    TopicArn: 'arn:aws:sns:eu-west-1:123456789012:orders',
    Subject: 'Order placed',
    Message: '{"orderId":"o-1"}',
    Timestamp: '2026-12-05T10:00:00.000Z',
    SignatureVersion: '1',
    Signature: 'c2lnbmF0dXJl',
    SigningCertURL: 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-0000.pem',
    UnsubscribeURL: 'https://sns.eu-west-1.amazonaws.com/?Action=Unsubscribe',
    ...overrides,
  };
}

/** One record of an S3 event notification, as S3 writes it (the key URL-encoded, `+` for a space). */
function s3Record(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    awsRegion: 'eu-west-1',
    eventTime: '2026-12-05T10:00:00.000Z',
    eventName: 'ObjectCreated:Put',
    s3: {
      s3SchemaVersion: '1.0',
      bucket: { name: 'shop-uploads', arn: 'arn:aws:s3:::shop-uploads' },
      object: { key: 'invoices/caf%C3%A9+menu.pdf', size: 1024, sequencer: '0055AED6DCD90281E5' },
    },
    ...overrides,
  };
}

/** The event S3 sends once when a notification is configured. */
function s3TestEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    Service: 'Amazon S3',
    Event: 's3:TestEvent',
    Time: '2026-12-05T09:59:00.000Z',
    Bucket: 'shop-uploads',
    RequestId: 'R1',
    HostId: 'H1',
    ...overrides,
  };
}

const reason = (open: () => unknown) => {
  try {
    open();
  } catch (error) {
    return (error as Error).message;
  }
  return undefined;
};

describe('the envelope field readers', () => {
  it('read a non-empty string, and say what a field held instead', () => {
    expect(stringField({ a: 'x' }, 'a')).toBe('x');
    expect(stringField({ a: '' }, 'a')).toBeUndefined();
    expect(stringField({ a: 7 }, 'a')).toBeUndefined();
    const held = (value: unknown) => reason(() => requireString({ id: value }, 'id', 'a thing'));
    expect(held(undefined)).toBe('the body is not a thing: its "id" is missing, not a non-empty string');
    expect(held(null)).toBe('the body is not a thing: its "id" is null, not a non-empty string');
    expect(held(['x'])).toBe('the body is not a thing: its "id" is an array, not a non-empty string');
    expect(held([])).toBe('the body is not a thing: its "id" is an empty array, not a non-empty string');
    expect(held(7)).toBe('the body is not a thing: its "id" is number, not a non-empty string');
    expect(held('')).toBe('the body is not a thing: its "id" is "", not a non-empty string');
    // A long value (one a reader refuses for its content, as bad base64) is quoted by its first 40 characters.
    expect(notEnvelope('a thing', 'data', 'y'.repeat(50), 'base64').message).toBe(
      `the body is not a thing: its "data" is ${JSON.stringify('y'.repeat(40))}, not base64`,
    );
    expect(requireString({ id: 'k' }, 'id', 'a thing')).toBe('k');
  });
});

describe('the EventBridge reader', () => {
  it('recognizes an event only with every field EventBridge always sends, resources and an object detail', () => {
    expect(eventBridgeEnvelope.recognizes(eventBridgeEvent())).toBe(true);
    for (const name of ['version', 'id', 'detail-type', 'source', 'account', 'time', 'region']) {
      expect(eventBridgeEnvelope.recognizes(eventBridgeEvent({ [name]: undefined }))).toBe(false);
      expect(eventBridgeEnvelope.recognizes(eventBridgeEvent({ [name]: '' }))).toBe(false);
    }
    expect(eventBridgeEnvelope.recognizes(eventBridgeEvent({ resources: undefined }))).toBe(false);
    expect(eventBridgeEnvelope.recognizes(eventBridgeEvent({ detail: 'text' }))).toBe(false);
  });

  it('opens the detail, routed by detail-type and keyed by id, with what EventBridge said on the context', () => {
    expect(
      eventBridgeEnvelope.open(eventBridgeEvent({ resources: ['arn:aws:shop:order/1', 42, null] })),
    ).toEqual({
      envelope: {
        kind: 'eventbridge',
        id: 'eb-1',
        detailType: 'OrderPlaced',
        source: 'shop.orders',
        account: '123456789012',
        time: '2026-12-05T10:00:00Z',
        region: 'eu-west-1',
        resources: ['arn:aws:shop:order/1'],
        version: '0',
      },
      inner: { value: { orderId: 'o-1' } },
      type: 'OrderPlaced',
      key: 'eb-1',
    });
    expect(eventBridgeEnvelope.open(eventBridgeEvent({ resources: 'none' })).envelope).toMatchObject({
      resources: [],
    });
  });

  it('names the field an event it was asked to open lacks', () => {
    expect(reason(() => eventBridgeEnvelope.open(eventBridgeEvent({ id: undefined })))).toBe(
      'the body is not an EventBridge event: its "id" is missing, not a non-empty string',
    );
    expect(reason(() => eventBridgeEnvelope.open(eventBridgeEvent({ detail: [1] })))).toBe(
      'the body is not an EventBridge event: its "detail" is an array, not an object',
    );
    expect(reason(() => eventBridgeEnvelope.open(eventBridgeEvent({ source: 3 })))).toBe(
      'the body is not an EventBridge event: its "source" is number, not a non-empty string',
    );
  });
});

describe('the CloudEvents reader', () => {
  it('recognizes a structured-mode event by its four required attributes', () => {
    expect(cloudEventsEnvelope.recognizes(cloudEvent())).toBe(true);
    for (const name of ['specversion', 'id', 'source', 'type']) {
      expect(cloudEventsEnvelope.recognizes(cloudEvent({ [name]: undefined }))).toBe(false);
    }
  });

  it('opens data, routed by type and keyed by id, with the context attributes and the extensions apart', () => {
    const body = cloudEvent({
      subject: 'order/1',
      time: '2026-12-05T10:00:00Z',
      datacontenttype: 'application/json',
      dataschema: 'https://shop.example/schemas/order-placed',
      tenant: 'acme',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      data: { orderId: 'o-1' },
    });
    expect(cloudEventsEnvelope.open(body)).toEqual({
      envelope: {
        kind: 'cloudevents',
        id: 'ce-1',
        source: '/shop/orders',
        type: 'order.placed',
        specversion: '1.0',
        subject: 'order/1',
        time: '2026-12-05T10:00:00Z',
        datacontenttype: 'application/json',
        dataschema: 'https://shop.example/schemas/order-placed',
        extensions: {
          tenant: 'acme',
          traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        },
      },
      inner: { value: { orderId: 'o-1' } },
      type: 'order.placed',
      key: 'ce-1',
    });
  });

  it('gives an event without data an empty object, data_base64 as its bytes, and refuses both or bad base64', () => {
    expect(cloudEventsEnvelope.open(cloudEvent()).inner).toEqual({ value: {} });
    expect(cloudEventsEnvelope.open(cloudEvent({ data: 'text' })).inner).toEqual({ value: 'text' });
    expect(cloudEventsEnvelope.open(cloudEvent({ data_base64: 'aGk=' })).inner).toEqual({
      value: Buffer.from('hi'),
    });
    expect(reason(() => cloudEventsEnvelope.open(cloudEvent({ data: null, data_base64: 'aGk=' })))).toBe(
      'the body is not a CloudEvent: it has both "data" and "data_base64"',
    );
    expect(reason(() => cloudEventsEnvelope.open(cloudEvent({ data_base64: '***' })))).toBe(
      'the body is not a CloudEvent: its "data_base64" is "***", not base64',
    );
    expect(reason(() => cloudEventsEnvelope.open(cloudEvent({ data_base64: 7 })))).toBe(
      'the body is not a CloudEvent: its "data_base64" is number, not base64',
    );
  });

  it('counts data_base64 and an event without data as no extension', () => {
    expect(cloudEventsEnvelope.open(cloudEvent({ data_base64: 'aGk=', tenant: 'acme' })).envelope).toEqual({
      kind: 'cloudevents',
      id: 'ce-1',
      source: '/shop/orders',
      type: 'order.placed',
      specversion: '1.0',
      subject: undefined,
      time: undefined,
      datacontenttype: undefined,
      dataschema: undefined,
      extensions: { tenant: 'acme' },
    });
    expect(cloudEventsEnvelope.open(cloudEvent()).envelope).toMatchObject({ extensions: {} });
  });

  it('names the attribute an event it was asked to open lacks', () => {
    for (const name of ['specversion', 'id', 'type', 'source']) {
      expect(reason(() => cloudEventsEnvelope.open(cloudEvent({ [name]: undefined })))).toBe(
        `the body is not a CloudEvent: its "${name}" is missing, not a non-empty string`,
      );
    }
  });
});

describe('the SNS reader', () => {
  it('recognizes a notification by its Type, MessageId, an SNS topic ARN and a Message string', () => {
    expect(snsEnvelope.recognizes(snsNotification())).toBe(true);
    // The fields a notification always has, and nothing else: no Subject, Timestamp or signature needed.
    expect(
      snsEnvelope.recognizes({
        Type: 'Notification',
        MessageId: 'm-1',
        TopicArn: 'arn:aws:sns:eu-west-1:123456789012:orders',
        Message: 'hi',
      }),
    ).toBe(true);
    for (const overrides of [
      { Type: undefined },
      { Type: 'SubscriptionConfirmation' },
      { Type: 'notification' },
      { MessageId: undefined },
      { MessageId: '' },
      { TopicArn: undefined },
      { TopicArn: 42 },
      // Another service's ARN, or an SNS-like name that is no ARN.
      { TopicArn: 'arn:aws:sqs:eu-west-1:123456789012:orders' },
      { TopicArn: 'urn:aws:sns:eu-west-1:123456789012:orders' },
      { Message: undefined },
      { Message: { orderId: 'o-1' } },
    ]) {
      expect([overrides, snsEnvelope.recognizes(snsNotification(overrides))]).toEqual([overrides, false]);
    }
  });

  it('opens the Message as text, with what SNS said on the context, and no key or type', () => {
    const body = snsNotification({
      SequenceNumber: '10000000000000004000',
      MessageAttributes: {
        tenant: { Type: 'String', Value: 'acme' },
        retries: { Type: 'Number', Value: '3' },
        // Not what SNS writes: left out rather than guessed.
        broken: { Type: 'String' },
        odd: 'x',
      },
    });
    expect(snsEnvelope.open(body)).toEqual({
      envelope: {
        kind: 'sns',
        messageId: '9f1b8c2e-6d4a-5b7e-8f3c-1a2b3c4d5e6f',
        topicArn: 'arn:aws:sns:eu-west-1:123456789012:orders',
        subject: 'Order placed',
        timestamp: '2026-12-05T10:00:00.000Z',
        sequenceNumber: '10000000000000004000',
        messageAttributes: {
          tenant: { Type: 'String', Value: 'acme' },
          retries: { Type: 'Number', Value: '3' },
        },
      },
      inner: { text: '{"orderId":"o-1"}' },
    });
  });

  it('puts no subject, an empty timestamp, no sequence number and no attributes where SNS sent none', () => {
    const body = snsNotification({ Subject: null, Timestamp: undefined, MessageAttributes: undefined });
    expect(snsEnvelope.open(body).envelope).toEqual({
      kind: 'sns',
      messageId: '9f1b8c2e-6d4a-5b7e-8f3c-1a2b3c4d5e6f',
      topicArn: 'arn:aws:sns:eu-west-1:123456789012:orders',
      subject: undefined,
      timestamp: '',
      sequenceNumber: undefined,
      messageAttributes: {},
    });
  });

  it('names the field a notification it was asked to open lacks', () => {
    expect(reason(() => snsEnvelope.open({ orderId: 'o-1' }))).toBe(
      'the body is not an SNS notification: its "Type" is missing, not "Notification" (a raw delivery? then the ' +
        'queue takes no envelope)',
    );
    expect(reason(() => snsEnvelope.open(snsNotification({ Type: 'SubscriptionConfirmation' })))).toBe(
      'the body is not an SNS notification: its "Type" is "SubscriptionConfirmation", not "Notification" (a raw ' +
        'delivery? then the queue takes no envelope)',
    );
    expect(reason(() => snsEnvelope.open(snsNotification({ Message: { orderId: 'o-1' } })))).toBe(
      'the body is not an SNS notification: its "Message" is object, not a string',
    );
    expect(reason(() => snsEnvelope.open(snsNotification({ Message: undefined })))).toBe(
      'the body is not an SNS notification: its "Message" is missing, not a string',
    );
    expect(reason(() => snsEnvelope.open(snsNotification({ MessageId: undefined })))).toBe(
      'the body is not an SNS notification: its "MessageId" is missing, not a non-empty string',
    );
    expect(reason(() => snsEnvelope.open(snsNotification({ TopicArn: '' })))).toBe(
      'the body is not an SNS notification: its "TopicArn" is "", not a non-empty string',
    );
  });
});

describe('the S3 reader', () => {
  it('recognizes a notification whose every record is an S3 one (with an s3 object), and the test event', () => {
    expect(s3Envelope.recognizes({ Records: [s3Record()] })).toBe(true);
    // Recognized, then refused whole when opened (S3 sends one record per message).
    expect(s3Envelope.recognizes({ Records: [s3Record(), s3Record()] })).toBe(true);
    expect(s3Envelope.recognizes(s3TestEvent())).toBe(true);
    for (const body of [
      {},
      { Records: [] },
      { Records: 'none' },
      { Records: [null] },
      // One record of another service (an SQS or DynamoDB record has no s3 object; this one has).
      { Records: [s3Record(), s3Record({ eventSource: 'aws:sqs' })] },
      { Records: [s3Record({ eventSource: 'aws:sqs' })] },
      { Records: [s3Record({ eventSource: undefined })] },
      { Records: [s3Record({ s3: undefined })] },
      { Records: [s3Record({ s3: 'shop-uploads/key' })] },
      // The test event is S3's only with both fields.
      { Event: 's3:TestEvent', Bucket: 'shop-uploads' },
      { Service: 'Amazon S3', Bucket: 'shop-uploads' },
      { Service: 'Amazon S3', Event: 's3:ObjectCreated:Put', Bucket: 'shop-uploads' },
    ]) {
      expect([body, s3Envelope.recognizes(body)]).toEqual([body, false]);
    }
  });

  it('opens the record, keyed by bucket, key (as sent) and sequencer, with what S3 said on the context', () => {
    const record = s3Record();
    expect(s3Envelope.open({ Records: [record] })).toEqual({
      envelope: {
        kind: 's3',
        eventName: 'ObjectCreated:Put',
        bucket: 'shop-uploads',
        objectKey: 'invoices/café menu.pdf',
        eventTime: '2026-12-05T10:00:00.000Z',
        region: 'eu-west-1',
        sequencer: '0055AED6DCD90281E5',
      },
      inner: { value: record },
      key: 'shop-uploads/invoices/caf%C3%A9+menu.pdf@0055AED6DCD90281E5',
    });
  });

  it('gives a record without a sequencer no key, and leaves out what S3 did not say', () => {
    const record = {
      eventSource: 'aws:s3',
      s3: { bucket: { name: 'shop-uploads' }, object: { key: '100%25+done' } },
    };
    expect(s3Envelope.open({ Records: [record] })).toEqual({
      envelope: {
        kind: 's3',
        eventName: '',
        bucket: 'shop-uploads',
        objectKey: '100% done',
        eventTime: undefined,
        region: undefined,
        sequencer: undefined,
      },
      inner: { value: record },
      key: undefined,
    });
  });

  it('opens the test event as one to skip, typed s3:TestEvent, with its bucket and time', () => {
    const body = s3TestEvent();
    expect(s3Envelope.open(body)).toEqual({
      envelope: {
        kind: 's3',
        eventName: 's3:TestEvent',
        bucket: 'shop-uploads',
        objectKey: '',
        eventTime: '2026-12-05T09:59:00.000Z',
        region: undefined,
        sequencer: undefined,
      },
      inner: { value: body },
      type: 's3:TestEvent',
      skip: 's3:TestEvent of bucket "shop-uploads" (S3 sends one when a notification is configured)',
    });
    const bare = s3Envelope.open({ Service: 'Amazon S3', Event: 's3:TestEvent' });
    expect(bare.envelope).toEqual({
      kind: 's3',
      eventName: 's3:TestEvent',
      bucket: '',
      objectKey: '',
      eventTime: undefined,
      region: undefined,
      sequencer: undefined,
    });
    expect(bare.skip).toBe('s3:TestEvent of bucket "" (S3 sends one when a notification is configured)');
  });

  it('says why a body it was asked to open is no notification of one S3 object event', () => {
    const refusal = (body: Record<string, unknown>) => reason(() => s3Envelope.open(body));
    expect(refusal({ Event: 's3:TestEvent', Bucket: 'shop-uploads' })).toBe(
      'the body is not an S3 event notification: its "Records" is missing, not a list of records',
    );
    expect(refusal({ Service: 'Amazon S3', Bucket: 'shop-uploads' })).toBe(
      'the body is not an S3 event notification: its "Records" is missing, not a list of records',
    );
    expect(refusal({ Records: [] })).toBe(
      'the body is not an S3 event notification: its "Records" is an empty array, not a list of records',
    );
    expect(refusal({ Records: { 0: s3Record() } })).toBe(
      'the body is not an S3 event notification: its "Records" is object, not a list of records',
    );
    expect(refusal({ Records: [s3Record(), s3Record(), s3Record()] })).toBe(
      'the S3 notification holds 3 records; S3 sends one per message, and this one is refused whole rather ' +
        'than handled in part',
    );
    for (const record of [
      null,
      'shop-uploads/key',
      s3Record({ eventSource: 'aws:sqs' }),
      s3Record({ eventSource: undefined }),
      s3Record({ s3: undefined }),
      s3Record({ s3: ['shop-uploads'] }),
    ]) {
      expect([record, refusal({ Records: [record] })]).toEqual([
        record,
        'the body is not an S3 event notification: its record has no "eventSource": "aws:s3" and "s3" object',
      ]);
    }
    for (const s3 of [
      { bucket: { name: 'shop-uploads' }, object: {} },
      { bucket: { name: 'shop-uploads' } },
      { bucket: {}, object: { key: 'k' } },
      { bucket: 'shop-uploads', object: { key: 'k' } },
      { object: { key: 'k', sequencer: '01' } },
    ]) {
      expect([s3, refusal({ Records: [s3Record({ s3 })] })]).toEqual([
        s3,
        'the body is not an S3 event notification: its record names no bucket and object key',
      ]);
    }
  });
});
