import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { IsIn, IsInt, IsString, Matches, MaxLength, Min } from 'class-validator';
import {
  Idempotent,
  IdempotencyKey,
  SqsContext,
  SqsEvent,
  SqsMessageHandler,
  SqsModuleOptions,
} from '../lib';
import { RecordingStore } from './support/recording-store';
import { createTestApp } from './support/test-app';

/**
 * Bodies that are not JSON objects: text, base64 and a decoder of your own, per queue or per
 * event class. The event class receives `{ body }` and validates it like any field.
 */

@SqsEvent('greeting')
class Greeting {
  @IsString() @MaxLength(40) body!: string;
}

@SqsEvent('thumbnail', { decoder: 'base64' })
class Thumbnail {
  body!: Buffer;
}

@SqsEvent('reading', {
  // "sensor-7;21" → { sensor, celsius }
  decoder: (text: string) => {
    const [sensor, celsius] = text.split(';');
    if (celsius === undefined)
      throw new Error(`a reading is "<sensor>;<celsius>", got ${JSON.stringify(text)}`);
    return { sensor, celsius: Number(celsius) };
  },
})
class Reading {
  @Matches(/^sensor-\d+$/) sensor!: string;
  @IsInt() @Min(-90) celsius!: number;
}

@SqsEvent('order_created')
class OrderCreated {
  @IsString() id!: string;
  @IsIn(['created']) status!: string;
}

@Injectable()
class Inbox {
  readonly seen: unknown[] = [];
  readonly keys: string[] = [];

  @SqsMessageHandler(Greeting, { queue: 'greetings' })
  @Idempotent({ key: (event: Greeting) => createHash('sha256').update(event.body).digest('hex') })
  async onGreeting(event: Greeting, ctx: SqsContext): Promise<void> {
    this.seen.push(event);
    this.keys.push(ctx.state.idempotencyKey!);
  }

  @SqsMessageHandler(Thumbnail, { queue: 'media' })
  async onThumbnail(event: Thumbnail): Promise<void> {
    this.seen.push(event);
  }

  @SqsMessageHandler(Reading, { queue: 'sensors' })
  async onReading(event: Reading): Promise<void> {
    this.seen.push(event);
  }

  @SqsMessageHandler(OrderCreated, { queue: 'sensors' })
  @Idempotent()
  async onOrder(event: OrderCreated, @IdempotencyKey() key: string): Promise<void> {
    this.seen.push(event);
    this.keys.push(key);
  }
}

const queues: SqsModuleOptions['queues'] = [
  { name: 'greetings', decoder: 'text' },
  { name: 'media' },
  // Two classes: the type comes from a message attribute, so each class reads its own body.
  { name: 'sensors', discriminator: { attribute: 'kind' } },
];

async function app() {
  const store = new RecordingStore();
  const built = await createTestApp({ idempotency: { store }, sqs: { queues }, providers: [Inbox] });
  return { ...built, store, inbox: built.get(Inbox) };
}

describe('body decoders', () => {
  it("a queue's text decoder gives the event class { body }, validated", async () => {
    const { sqs, inbox, close } = await app();
    const hello = await sqs.send('Hello from SQS!', { queue: 'greetings' });
    expect(hello.status).toBe('OK');
    expect(inbox.seen).toEqual([Object.assign(new Greeting(), { body: 'Hello from SQS!' })]);
    expect(inbox.seen[0]).toBeInstanceOf(Greeting);

    const long = await sqs.send('x'.repeat(41), { queue: 'greetings' });
    expect(long.status).toBe('INVALID');
    expect(long.result.error?.message).toContain(
      'Greeting fails validation: body must be shorter than or equal to 40',
    );
    await close();
  });

  it('keys a raw body only by what you say: here, the SHA-256 of the text', async () => {
    const { sqs, store, inbox, close } = await app();
    expect((await sqs.send('Hello', { queue: 'greetings' })).status).toBe('OK');
    // A producer retry is a new SQS message with the same text: a duplicate by this key.
    expect((await sqs.send('Hello', { queue: 'greetings' })).status).toBe('DUPLICATE');
    expect((await sqs.send('Hello again', { queue: 'greetings' })).status).toBe('OK');
    expect(store.calls.filter((call) => call.method === 'tryAcquire')).toHaveLength(3);
    expect(inbox.keys).toEqual([createHash('sha256').update('Hello').digest('hex'), expect.any(String)]);
    await close();
  });

  it("an event class's base64 decoder gives it the bytes; a body that is not base64 is invalid", async () => {
    const { sqs, inbox, close } = await app();
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 255]);
    expect((await sqs.send(png.toString('base64'), { queue: 'media' })).status).toBe('OK');
    expect((inbox.seen[0] as Thumbnail).body).toEqual(png);
    const broken = await sqs.send('Test message.', { queue: 'media' });
    expect(broken.status).toBe('INVALID');
    expect(broken.result.error?.message).toContain('the body is not base64');
    await close();
  });

  it('a decoder function of the event class, on a queue routed by a message attribute', async () => {
    const { sqs, inbox, close } = await app();
    const reading = await sqs.send('sensor-7;21', {
      queue: 'sensors',
      messageAttributes: { kind: 'reading' },
    });
    expect(reading.status).toBe('OK');
    expect(inbox.seen).toEqual([Object.assign(new Reading(), { sensor: 'sensor-7', celsius: 21 })]);

    // The other class of the queue still reads JSON, keyed by its `id`.
    const order = await sqs.send(
      { id: 'o-1', status: 'created' },
      { queue: 'sensors', messageAttributes: { kind: 'order_created' } },
    );
    expect(order.status).toBe('OK');
    expect(order.result.key).toBe('o-1');

    const garbled = await sqs.send('sensor-7', { queue: 'sensors', messageAttributes: { kind: 'reading' } });
    expect(garbled.status).toBe('INVALID');
    expect(garbled.result.error?.message).toContain('a reading is "<sensor>;<celsius>", got "sensor-7"');
    const cold = await sqs.send('sensor-7;-300', {
      queue: 'sensors',
      messageAttributes: { kind: 'reading' },
    });
    expect(cold.result.error?.message).toContain('celsius must not be less than -90');
    await close();
  });

  it("a field discriminator reads the JSON first, then the class's decoder reads the body again", async () => {
    @SqsEvent('signed', { decoder: 'text' })
    class Signed {
      @IsString() body!: string;
    }
    @Injectable()
    class Verifier {
      readonly raw: string[] = [];
      @SqsMessageHandler(Signed)
      async onSigned(event: Signed): Promise<void> {
        this.raw.push(event.body);
      }
      @SqsMessageHandler(OrderCreated)
      async onOrder(): Promise<void> {}
    }
    const built = await createTestApp({ providers: [Verifier] });
    const body = '{"type":"signed","payload":{"a":1},"sig":"abc"}';
    expect((await built.sqs.send(body)).status).toBe('OK');
    // The handler gets the exact bytes sent (to check a signature over them), not a re-serialization.
    expect(built.get(Verifier).raw).toEqual([body]);
    await built.close();
  });

  it('refuses an unknown decoder at bootstrap, naming the queue or the class', async () => {
    await expect(
      createTestApp({ sqs: { queues: [{ name: 'q', decoder: 'xml' as never }] } }),
    ).rejects.toThrow(`SQS queue "q": decoder must be 'json', 'text', 'base64', 'base64-text' or a function`);
    @SqsEvent('odd', { decoder: 'yaml' as never })
    class Odd {}
    @Injectable()
    class OddHandler {
      @SqsMessageHandler(Odd)
      async on(): Promise<void> {}
    }
    await expect(createTestApp({ providers: [OddHandler] })).rejects.toThrow(
      '@SqsEvent() of Odd: decoder must be',
    );
  });
});
