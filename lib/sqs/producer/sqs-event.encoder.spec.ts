import { Exclude } from 'class-transformer';
import { JSON_BODY_DECODER, resolveBodyDecoder } from '../sqs-body.decoder';
import { SqsEvent } from '../sqs-event.decorator';
import { encodeEvent, EncodingTarget } from './sqs-event.encoder';

@SqsEvent('order_created')
class OrderCreated {
  id = 'e-1';
  @Exclude() secret = 'never sent';
}

@SqsEvent('blob', { decoder: 'base64' })
class Blob {
  body = Buffer.from([1, 2, 3]);
}

@SqsEvent('line', { decoder: 'text' })
class Line {
  body = 'hello';
}

@SqsEvent('csv', {
  decoder: (text: string) => ({ cells: text.split(',') }),
  encoder: (event: Csv) => event.cells.join(','),
})
class Csv {
  cells = ['a', 'b'];
}

const target = (over: Partial<EncodingTarget> = {}): EncodingTarget => ({
  description: 'queue "q"',
  discriminator: { field: 'type' },
  carriesType: true,
  decoder: JSON_BODY_DECODER,
  cloudEvents: false,
  cloudEventsSource: '/tests',
  ...over,
});

describe('encodeEvent', () => {
  it('writes JSON through class-transformer, with the type where the discriminator reads it', () => {
    expect(JSON.parse(encodeEvent(new OrderCreated(), target(), 'e-1', undefined).body)).toEqual({
      id: 'e-1',
      type: 'order_created',
    });
    expect(
      JSON.parse(
        encodeEvent(
          new OrderCreated(),
          target({ discriminator: { field: 'meta.kind' } }),
          undefined,
          undefined,
        ).body,
      ),
    ).toEqual({
      id: 'e-1',
      meta: { kind: 'order_created' },
    });
    const byAttribute = encodeEvent(
      new OrderCreated(),
      target({ discriminator: { attribute: 'eventType' } }),
      undefined,
      { tenant: 'a' },
    );
    expect(JSON.parse(byAttribute.body)).toEqual({ id: 'e-1' });
    expect(byAttribute.attributes).toEqual({
      tenant: { DataType: 'String', StringValue: 'a' },
      eventType: { DataType: 'String', StringValue: 'order_created' },
    });
  });

  it('leaves the type out for a queue that takes every message as one class', () => {
    expect(
      JSON.parse(encodeEvent(new OrderCreated(), target({ carriesType: false }), undefined, undefined).body),
    ).toEqual({ id: 'e-1' });
  });

  it('refuses an event whose own type field names another type', () => {
    const event = Object.assign(new OrderCreated(), { type: 'order_cancelled' });
    expect(() => encodeEvent(event, target(), undefined, undefined)).toThrow(
      'the OrderCreated has "type" "order_cancelled", but its class is the event type "order_created"',
    );
  });

  it('writes text and bytes classes as their decoder reads them back', () => {
    expect(encodeEvent(new Line(), target({ carriesType: false }), undefined, undefined).body).toBe('hello');
    expect(encodeEvent(new Blob(), target({ carriesType: false }), undefined, undefined).body).toBe('AQID');
    expect(
      encodeEvent(
        new Line(),
        target({ carriesType: false, decoder: resolveBodyDecoder('base64-text', 't') }),
        undefined,
        undefined,
      ).body,
    ).toBe('hello');
    expect(() => encodeEvent(new Line(), target(), undefined, undefined)).toThrow(
      'cannot carry its type in the body field "type"',
    );
  });

  it('writes a CloudEvent for a queue that takes them: the key is its id', () => {
    const event = JSON.parse(
      encodeEvent(new OrderCreated(), target({ cloudEvents: true }), 'e-1', undefined).body,
    );
    expect(event).toEqual({
      specversion: '1.0',
      id: 'e-1',
      source: '/tests',
      type: 'order_created',
      time: expect.any(String),
      datacontenttype: 'application/json',
      data: { id: 'e-1' },
    });
    const bytes = JSON.parse(
      encodeEvent(new Blob(), target({ cloudEvents: true }), undefined, undefined).body,
    );
    expect(bytes.data_base64).toBe('AQID');
    const text = JSON.parse(
      encodeEvent(new Line(), target({ cloudEvents: true }), undefined, undefined).body,
    );
    expect(text).toMatchObject({ datacontenttype: 'text/plain', data: 'hello' });
  });

  it('refuses, for a CloudEvents queue, what its consumer could not read back', () => {
    // Its consumer takes `data` as it is: a decoder function would never run on it.
    expect(() => encodeEvent(new Csv(), target({ cloudEvents: true }), undefined, undefined)).toThrow(
      'Csv is read by a decoder function, which a CloudEvents queue does not run',
    );
    const noText = Object.assign(new Line(), { body: undefined });
    expect(() => encodeEvent(noText, target({ cloudEvents: true }), undefined, undefined)).toThrow(
      'Line is sent as its "body" field, which must be a string (got undefined)',
    );
  });
});
