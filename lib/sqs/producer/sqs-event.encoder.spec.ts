import { Exclude } from 'class-transformer';
import { JSON_BODY_DECODER, resolveBodyDecoder } from '../sqs-body.decoder';
import { SqsEvent } from '../sqs-event.decorator';
import { encodeEvent, EncodingTarget, eventClassOf } from './sqs-event.encoder';

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

@SqsEvent('note', { decoder: 'base64-text' })
class Note {
  body = 'héllo';
}

@SqsEvent('pair', { decoder: (text: string) => ({ text }) })
class Pair {
  text = 'a';
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

  it("counts the bytes SQS counts: the body, and each attribute's name, type and value", () => {
    const { body, size } = encodeEvent(new OrderCreated(), target({ carriesType: false }), undefined, {
      tenant: 'é', // 2 bytes in UTF-8
      count: 12,
      raw: Buffer.from([1, 2, 3]),
      given: { DataType: 'String.custom', StringValue: 'x' },
    });
    expect(size).toBe(
      Buffer.byteLength(body) +
        ('tenant'.length + 'String'.length + 2) +
        ('count'.length + 'Number'.length + 2) +
        ('raw'.length + 'Binary'.length + 3) +
        ('given'.length + 'String.custom'.length + 1),
    );
    expect(encodeEvent(new Line(), target({ carriesType: false }), undefined, undefined).size).toBe(5);
  });

  it('writes attributes as the SDK takes them: text, numbers, bytes, and attributes given whole', () => {
    const raw = Buffer.from([1]);
    const given = { DataType: 'String.custom', StringValue: 'x' };
    expect(
      encodeEvent(new OrderCreated(), target({ carriesType: false }), undefined, {
        a: 'x',
        n: 1.5,
        raw,
        given,
      }).attributes,
    ).toEqual({
      a: { DataType: 'String', StringValue: 'x' },
      n: { DataType: 'Number', StringValue: '1.5' },
      raw: { DataType: 'Binary', BinaryValue: raw },
      given,
    });
  });

  it('writes the type at a nested path, into an object already there, and leaves a body that already says it', () => {
    const nested = Object.assign(new OrderCreated(), { meta: { tenant: 't' } });
    const path = target({ discriminator: { field: 'meta.kind' } });
    expect(JSON.parse(encodeEvent(nested, path, undefined, undefined).body)).toEqual({
      id: 'e-1',
      meta: { tenant: 't', kind: 'order_created' },
    });
    const deep = target({ discriminator: { field: 'a.b.kind' } });
    expect(JSON.parse(encodeEvent(new OrderCreated(), deep, undefined, undefined).body)).toEqual({
      id: 'e-1',
      a: { b: { kind: 'order_created' } },
    });
    const saying = Object.assign(new OrderCreated(), { type: 'order_created' });
    expect(JSON.parse(encodeEvent(saying, target(), undefined, undefined).body)).toEqual({
      id: 'e-1',
      type: 'order_created',
    });
    for (const meta of ['text', null]) {
      expect(() =>
        encodeEvent(Object.assign(new OrderCreated(), { meta }), path, undefined, undefined),
      ).toThrow('SqsProducer (queue "q"): cannot write the type at "meta.kind": "meta" is not an object.');
    }
    expect(() =>
      encodeEvent(new OrderCreated(), target({ discriminator: { field: 'a..b' } }), undefined, undefined),
    ).toThrow(/^SqsProducer \(queue "q"\): /);
  });

  it('refuses what is not an instance of an event class, saying what it got', () => {
    for (const [event, got] of [
      [null, 'null'],
      [{ id: 1 }, 'a plain object'],
      ['text', 'string'],
      [undefined, 'undefined'],
      [Object.create(null), 'a plain object'],
      [[new OrderCreated()], 'an array'],
    ] as const) {
      expect(() => eventClassOf(event, 'SqsProducer (queue "q")')).toThrow(
        `SqsProducer (queue "q"): send an instance of an event class (new OrderCreated(), or plainToInstance(OrderCreated, data)), not ${got}: its class names its type and how its body is written.`,
      );
    }
    expect(eventClassOf(new OrderCreated(), 'x')).toBe(OrderCreated);
  });

  it('sends a class read by a decoder function through its encoder, and refuses one without an encoder or whose encoder gives no text', () => {
    expect(encodeEvent(new Csv(), target({ carriesType: false }), undefined, undefined).body).toBe('a,b');
    expect(() => encodeEvent(new Pair(), target({ carriesType: false }), undefined, undefined)).toThrow(
      "SqsProducer: Pair is read by a decoder function; give it the inverse as @SqsEvent('...', { decoder, encoder: (event) => text }) to send it.",
    );
    const broken = Object.assign(new Csv(), { cells: { join: () => 42 } });
    expect(() => encodeEvent(broken, target({ carriesType: false }), undefined, undefined)).toThrow(
      'SqsProducer: the encoder of Csv returned number, not text.',
    );
  });

  it('writes a base64-text class as the base64 of its UTF-8 text, and refuses bodies of the wrong kind, naming what they held', () => {
    expect(encodeEvent(new Note(), target({ carriesType: false }), undefined, undefined).body).toBe(
      Buffer.from('héllo', 'utf8').toString('base64'),
    );
    const slice = Object.assign(new Blob(), { body: Buffer.from([9, 1, 2, 3, 9]).subarray(1, 4) });
    expect(encodeEvent(slice, target({ carriesType: false }), undefined, undefined).body).toBe('AQID');
    expect(() =>
      encodeEvent(
        Object.assign(new Blob(), { body: 'AQID' }),
        target({ carriesType: false }),
        undefined,
        undefined,
      ),
    ).toThrow('SqsProducer: Blob is sent as its "body" field, which must be a Buffer (got string).');
    expect(() =>
      encodeEvent(
        Object.assign(new Line(), { body: null }),
        target({ carriesType: false }),
        undefined,
        undefined,
      ),
    ).toThrow('SqsProducer: Line is sent as its "body" field, which must be a string (got null).');
  });

  it('gives a CloudEvent without a key an id of its own, the time it was written, and bytes as data_base64', () => {
    const before = Date.now();
    const first = JSON.parse(
      encodeEvent(new OrderCreated(), target({ cloudEvents: true }), undefined, undefined).body,
    );
    const second = JSON.parse(
      encodeEvent(new OrderCreated(), target({ cloudEvents: true }), undefined, undefined).body,
    );
    expect(first.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(second.id).not.toBe(first.id);
    expect(Date.parse(first.time)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(first.time)).toBeLessThanOrEqual(Date.now());
    expect(new Date(first.time).toISOString()).toBe(first.time);
    expect(
      JSON.parse(encodeEvent(new Blob(), target({ cloudEvents: true }), undefined, undefined).body),
    ).toEqual({
      specversion: '1.0',
      id: expect.any(String),
      source: '/tests',
      type: 'blob',
      time: expect.any(String),
      datacontenttype: 'application/octet-stream',
      data_base64: 'AQID',
    });
    const noBytes = Object.assign(new Blob(), { body: 'x' });
    expect(() => encodeEvent(noBytes, target({ cloudEvents: true }), undefined, undefined)).toThrow(
      'must be a Buffer (got string)',
    );
  });

  it('puts the type in a message attribute for a queue routed by one, whatever the body is written as', () => {
    const byAttribute = target({ discriminator: { attribute: 'kind' } });
    const { body, attributes } = encodeEvent(new Line(), byAttribute, undefined, undefined);
    expect(body).toBe('hello');
    expect(attributes).toEqual({ kind: { DataType: 'String', StringValue: 'line' } });
    expect(
      encodeEvent(
        new Line(),
        target({ discriminator: { attribute: 'kind' }, carriesType: false }),
        undefined,
        undefined,
      ).attributes,
    ).toEqual({});
    expect(
      encodeEvent(new OrderCreated(), target({ discriminator: 'type' as never }), undefined, undefined)
        .attributes,
    ).toEqual({});
  });

  it('names the queue, the class and the fix in what it refuses', () => {
    expect(() => encodeEvent({ id: 1 }, target(), undefined, undefined)).toThrow(
      /^SqsProducer \(queue "q"\): send an instance of an event class/,
    );
    @SqsEvent('odd', { decoder: 'yaml' as never })
    class Odd {}
    expect(() => encodeEvent(new Odd(), target(), undefined, undefined)).toThrow(
      /^@SqsEvent\(\) of Odd: decoder must be/,
    );
    expect(() => encodeEvent(new Line(), target(), undefined, undefined)).toThrow(
      'SqsProducer (queue "q"): Line is written as text, which cannot carry its type in the body field "type"; ' +
        "route the queue by a message attribute (discriminator: { attribute: 'eventType' }).",
    );
    expect(() => encodeEvent(new Csv(), target({ cloudEvents: true }), undefined, undefined)).toThrow(
      "SqsProducer (queue \"q\"): Csv is read by a decoder function, which a CloudEvents queue does not run (its consumer takes the CloudEvent's data as it is); send it to a queue without envelope: 'cloudevents', or give the class a JSON, text or bytes form.",
    );
  });
});
