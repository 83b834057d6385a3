import { cloudEventsEnvelope } from './cloudevents.envelope';
import { notEnvelope, requireString, stringField } from './envelope-fields';
import { eventBridgeEnvelope } from './eventbridge.envelope';

/**
 * The EventBridge and CloudEvents readers alone: what each recognizes, what it puts on the context, and
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

  it('names the attribute an event it was asked to open lacks', () => {
    for (const name of ['specversion', 'id', 'type', 'source']) {
      expect(reason(() => cloudEventsEnvelope.open(cloudEvent({ [name]: undefined })))).toBe(
        `the body is not a CloudEvent: its "${name}" is missing, not a non-empty string`,
      );
    }
  });
});
