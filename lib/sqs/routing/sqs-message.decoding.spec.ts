import { SqsContext } from '../sqs-context';
import { SqsFallback } from '../sqs-fallback.decorator';
import { envelopeOpener } from './envelopes/envelope-opener';
import { SqsMessageDecoding } from './sqs-message.decoding';
import { SqsQueueRouter } from './sqs-queue.router';

const sns = (message: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    Type: 'Notification',
    MessageId: 'sns-1',
    TopicArn: 'arn:aws:sns:eu-west-1:123456789012:orders',
    Subject: null,
    Message: typeof message === 'string' ? message : JSON.stringify(message),
    Timestamp: '2026-01-01T00:00:00.000Z',
    ...extra,
  });
const eventBridge = (detail: unknown) => ({
  version: '0',
  id: 'eb-1',
  'detail-type': 'Order Placed',
  source: 'com.example.orders',
  account: '123456789012',
  time: '2026-01-01T00:00:00Z',
  region: 'eu-west-1',
  resources: [],
  detail,
});
const s3 = (records: number) => ({
  Records: Array.from({ length: records }, () => ({
    eventSource: 'aws:s3',
    eventName: 'ObjectCreated:Put',
    s3: { bucket: { name: 'b' }, object: { key: 'a+file%21.txt', sequencer: '0A1B' } },
  })),
});

describe('SqsMessageDecoding', () => {
  const fallback = {
    name: 'Fallback.on',
    eventType: '*',
    eventClass: SqsFallback,
    queue: undefined,
    invoke: async () => undefined,
  };
  const router = new SqsQueueRouter('q', [fallback], { field: 'type' });
  const decode = (decoding: SqsMessageDecoding, body: string) => {
    const record = { messageId: 'm-1', body };
    const context = new SqsContext(record, 'q');
    return { decoded: decoding.decode(record, router, context), context };
  };

  it('reads a raw message at once: no envelope to open, no reader to wait for', () => {
    const decoding = new SqsMessageDecoding('q', {});
    expect(decoding.envelopes).toEqual([]);
    expect(decoding.namesKey).toBe(false);
    const { decoded, context } = decode(decoding, '{"Type":"Notification"}');
    expect(decoded).toEqual({
      route: expect.objectContaining({ eventType: '*' }),
      payload: { Type: 'Notification' },
    });
    expect(context.envelopes).toEqual([]);
  });

  it('opens envelopes once their readers have loaded: the first records wait for them, later ones do not', async () => {
    const decoding = new SqsMessageDecoding('q', { envelope: 'sns' });
    expect(decoding.envelopes).toEqual(['sns']);
    const first = decode(decoding, sns({ type: 'paid' }));
    expect(first.decoded).toBeInstanceOf(Promise);
    await expect(first.decoded).resolves.toMatchObject({ payload: { type: 'paid' } });
    expect(first.context.envelope('sns')?.messageId).toBe('sns-1');
    const later = decode(decoding, sns({ type: 'paid' }));
    expect(later.decoded).toMatchObject({ payload: { type: 'paid' } });
    expect(later.context.envelopes.map((envelope) => envelope.kind)).toEqual(['sns']);
  });

  it("takes 'none' (and no option) as raw messages", () => {
    for (const envelope of ['none', undefined]) {
      const decoding = new SqsMessageDecoding('q', { envelope });
      expect(decoding.envelopes).toEqual([]);
      expect(decode(decoding, '{"type":"paid"}').decoded).toEqual({
        route: expect.objectContaining({ eventType: '*' }),
        payload: { type: 'paid' },
      });
    }
  });

  it("reads the event inside an envelope with the queue's decoder where the envelope holds text", async () => {
    const text = new SqsMessageDecoding('q', { envelope: 'auto', decoder: 'text' });
    // 'auto' parsed the raw body to look for an envelope: the text decoder still reads its text.
    await expect(decode(text, '{"type":"paid"}').decoded).resolves.toEqual({
      route: expect.objectContaining({ eventType: '*' }),
      payload: { body: '{"type":"paid"}' },
    });
    expect(decode(text, sns('a,b,c')).decoded).toMatchObject({ payload: { body: 'a,b,c' } });
    // An EventBridge detail is no text: it is the event, whatever the decoder.
    const detail = decode(text, JSON.stringify(eventBridge({ orderId: 'o-1' })));
    expect(detail.decoded).toMatchObject({ payload: { orderId: 'o-1' } });
    expect(detail.context.envelopeKey).toBe('eb-1');
    const eventBridgeText = new SqsMessageDecoding('q', { envelope: 'eventbridge', decoder: 'base64' });
    await expect(
      decode(eventBridgeText, JSON.stringify(eventBridge({ orderId: 'o-2' }))).decoded,
    ).resolves.toMatchObject({ payload: { orderId: 'o-2' } });
  });

  it('names a key where the innermost envelope gives the event an id', () => {
    const namesKey = (envelope: unknown) => new SqsMessageDecoding('q', { envelope }).namesKey;
    expect([namesKey('sns'), namesKey(['sns', 's3']), namesKey('cloudevents'), namesKey('auto')]).toEqual([
      false,
      true,
      true,
      true,
    ]);
  });
});

describe('envelopeOpener', () => {
  const open = (envelope: unknown, body: string) =>
    envelopeOpener(new SqsMessageDecoding('q', { envelope }).envelopes)(body);

  it('sns: the Message is the event, and what SNS said is kept', () => {
    const opened = open(
      'sns',
      sns(
        { type: 'order_created' },
        { Subject: 'hi', MessageAttributes: { kind: { Type: 'String', Value: 'x' } } },
      ),
    );
    expect(opened.inner).toEqual({ text: '{"type":"order_created"}' });
    expect(opened.envelopes).toEqual([
      {
        kind: 'sns',
        messageId: 'sns-1',
        topicArn: 'arn:aws:sns:eu-west-1:123456789012:orders',
        subject: 'hi',
        timestamp: '2026-01-01T00:00:00.000Z',
        sequenceNumber: undefined,
        messageAttributes: { kind: { Type: 'String', Value: 'x' } },
      },
    ]);
    expect(opened.key).toBeUndefined();
    expect(() => open('sns', '{"type":"order_created"}')).toThrow(
      'the body is not an SNS notification: its "Type" is missing, not "Notification"',
    );
    expect(() => open('sns', 'Test message.')).toThrow('the body is not JSON');
  });

  it('eventbridge: detail is the event, detail-type its type, id its key', () => {
    const opened = open('eventbridge', JSON.stringify(eventBridge({ orderId: 'o-1' })));
    expect(opened).toMatchObject({ inner: { value: { orderId: 'o-1' } }, type: 'Order Placed', key: 'eb-1' });
    expect(() => open('eventbridge', JSON.stringify(eventBridge('x')))).toThrow(
      'its "detail" is "x", not an object',
    );
  });

  it('s3: the record is the event, keyed by bucket, key and sequencer; a test event is skipped', () => {
    const opened = open('s3', JSON.stringify(s3(1)));
    expect(opened.key).toBe('b/a+file%21.txt@0A1B');
    expect(opened.envelopes[0]).toMatchObject({ kind: 's3', bucket: 'b', objectKey: 'a file!.txt' });
    const test = open('s3', JSON.stringify({ Service: 'Amazon S3', Event: 's3:TestEvent', Bucket: 'b' }));
    expect(test.skip).toContain('s3:TestEvent of bucket "b"');
    expect(() => open('s3', JSON.stringify(s3(2)))).toThrow('holds 2 records');
  });

  it('cloudevents: data (or the bytes of data_base64) is the event, type its type, id its key', () => {
    const base = {
      specversion: '1.0',
      id: 'ce-1',
      source: '/orders',
      type: 'order.created',
      traceparent: 't',
    };
    const opened = open('cloudevents', JSON.stringify({ ...base, data: { orderId: 'o-1' } }));
    expect(opened).toMatchObject({
      inner: { value: { orderId: 'o-1' } },
      type: 'order.created',
      key: 'ce-1',
    });
    expect(opened.envelopes[0]).toMatchObject({ extensions: { traceparent: 't' } });
    const binary = open(
      'cloudevents',
      JSON.stringify({ ...base, data_base64: Buffer.from('hi').toString('base64') }),
    );
    expect(binary.inner).toEqual({ value: Buffer.from('hi') });
  });

  it('a list opens envelopes inside envelopes, outermost first', () => {
    const opened = open(['sns', 's3'], sns(s3(1)));
    expect(opened.envelopes.map((envelope) => envelope.kind)).toEqual(['sns', 's3']);
    expect(opened.key).toBe('b/a+file%21.txt@0A1B');
    expect(() => open(['sns', 's3'], sns('Test message.'))).toThrow('the queue takes S3 envelopes');
  });

  it("auto opens what is certainly an envelope, and never a user's JSON that only looks alike", () => {
    expect(open('auto', sns({ a: 1 })).envelopes.map((envelope) => envelope.kind)).toEqual(['sns']);
    expect(open('auto', sns(eventBridge({ a: 1 }))).envelopes.map((envelope) => envelope.kind)).toEqual([
      'sns',
      'eventbridge',
    ]);
    expect(open('auto', JSON.stringify(s3(1))).envelopes.map((envelope) => envelope.kind)).toEqual(['s3']);
    // A user's own event with a `Type` field, or an SNS-like shape missing a field, stays raw.
    for (const body of [
      { Type: 'Notification', Message: 'hi' },
      { Type: 'Notification', MessageId: 'm', TopicArn: 'orders', Message: 'hi' },
      { type: 'order_created', id: 'e-1', source: 'shop' },
      { 'detail-type': 'x', detail: {}, id: '1', source: 's' },
      { Records: [{ eventSource: 'aws:sqs' }] },
    ]) {
      const opened = open('auto', JSON.stringify(body));
      expect(opened.envelopes).toEqual([]);
      expect(opened.inner).toEqual({ text: JSON.stringify(body), value: body });
    }
    expect(open('auto', 'Test message.')).toEqual({ inner: { text: 'Test message.' }, envelopes: [] });
  });

  it('refuses an unknown envelope option with a sentence', () => {
    expect(() => new SqsMessageDecoding('q', { envelope: 'kafka' })).toThrow(
      `SQS queue "q": envelope must be 'none', 'auto', 'sns', 'eventbridge', 's3', 'cloudevents' or a list`,
    );
    expect(() => new SqsMessageDecoding('q', { envelope: [] })).toThrow('envelope must be');
  });

  it('refuses a list with one unknown kind, and names what it got, word for word', () => {
    const refusal = (envelope: unknown) => {
      try {
        new SqsMessageDecoding('orders', { envelope });
      } catch (error) {
        return (error as Error).message;
      }
      return undefined;
    };
    const must =
      `SQS queue "orders": envelope must be 'none', 'auto', 'sns', 'eventbridge', 's3', 'cloudevents' or a list ` +
      `of them, outermost first (e.g. ['sns', 's3'])`;
    expect(refusal(['sns', 'kafka'])).toBe(`${must}, got ["sns","kafka"].`);
    expect(refusal(['SNS'])).toBe(`${must}, got ["SNS"].`);
    expect(refusal('None')).toBe(`${must}, got "None".`);
    expect(refusal([])).toBe(`${must}, got [].`);
    expect(refusal(true)).toBe(`${must}, got true.`);
    expect(refusal(['sns', 's3'])).toBeUndefined();
  });

  it('names the envelope a body that is no JSON object was to be, as the queue names it', () => {
    const reason = (envelope: unknown, body: string) => {
      try {
        open(envelope, body);
      } catch (error) {
        return (error as Error).message;
      }
      return undefined;
    };
    expect(reason('sns', '[]')).toBe(
      'the body is JSON array, not an object, and the queue takes SNS envelopes',
    );
    expect(reason('eventbridge', '"x"')).toBe(
      'the body is JSON string, not an object, and the queue takes EventBridge envelopes',
    );
    expect(reason('s3', 'null')).toBe(
      'the body is JSON null, not an object, and the queue takes S3 envelopes',
    );
    expect(reason('cloudevents', '7')).toBe(
      'the body is JSON number, not an object, and the queue takes CloudEvents envelopes',
    );
    expect(reason(['sns', 'cloudevents'], sns('[1]'))).toBe(
      'the body is JSON array, not an object, and the queue takes CloudEvents envelopes',
    );
  });

  it('says which envelope holds no object where the next envelope should be', () => {
    const event = { specversion: '1.0', id: 'ce-1', source: '/orders', type: 'order.created' };
    expect(() => open(['cloudevents', 'eventbridge'], JSON.stringify({ ...event, data: 'text' }))).toThrow(
      new Error('the cloudevents envelope holds no EventBridge envelope'),
    );
    const bytes = JSON.stringify({ ...event, data_base64: Buffer.from('{}').toString('base64') });
    expect(() => open(['cloudevents', 's3'], bytes)).toThrow(
      new Error('the cloudevents envelope holds no S3 envelope'),
    );
  });

  it('stops at a test event: what it lists inside S3 is not opened, and the record is skipped', () => {
    const test = { Service: 'Amazon S3', Event: 's3:TestEvent', Bucket: 'b' };
    const opened = open(['sns', 's3', 'cloudevents'], sns(test));
    expect(opened.skip).toBe('s3:TestEvent of bucket "b" (S3 sends one when a notification is configured)');
    expect(opened.type).toBe('s3:TestEvent');
    expect(opened.envelopes.map((envelope) => envelope.kind)).toEqual(['sns', 's3']);
  });
});
