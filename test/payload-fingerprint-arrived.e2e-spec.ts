import { Injectable } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString } from 'class-validator';
import {
  Idempotent,
  IdempotencyFingerprintMismatchError,
  InMemoryIdempotencyStore,
  SqsContext,
  SqsEvent,
  SqsMessageHandler,
} from '../lib';
import { buildEventBridgeEvent } from '../lib/testing';
import { createTestApp, TestApp } from './support/test-app';

/**
 * Payload fingerprints hash the payload as it arrived (#48): the decoded body (or the event an
 * envelope held), plain JSON with sorted keys, never the event instance the class made of it. What
 * that instance hid from JSON (a `#private` money field, `URLSearchParams`) can no longer make two
 * payloads one fingerprint, a `toJSON` that wraps itself can no longer hang the process, and a value
 * a fingerprint function selects that is not plain JSON fails its record, naming the field.
 */

/** A money type keeping its amount in a `#private` field: JSON writes it as `{}`. */
class Money {
  readonly #cents: number;
  constructor(cents: number) {
    this.#cents = cents;
  }
  get cents(): number {
    return this.#cents;
  }
}

/** A `toJSON` answering a wrapper that holds the instance: a walk that follows it never ends. */
class SelfWrapping {
  constructor(readonly text: string) {}
  toJSON(): unknown {
    return { wrapped: this };
  }
}

@SqsEvent('price_set')
class PriceSet {
  @IsString() id!: string;
  @Transform(({ value }) => new Money(value as number)) price!: Money;
  @IsOptional() @Transform(({ value }) => new URLSearchParams(value as string)) query?: URLSearchParams;
  @IsOptional() @Transform(({ value }) => new SelfWrapping(value as string)) note?: SelfWrapping;
}

@SqsEvent('note_added')
class NoteAdded {
  @IsString() id!: string;
  @IsString() note!: string;
}

@SqsEvent('thumbnail', { decoder: 'base64' })
class Thumbnail {
  body!: Buffer;
}

@SqsEvent('order_placed')
class OrderPlaced {
  @IsString() orderId!: string;
  @IsInt() amount!: number;
}

@Injectable()
class Ledger {
  readonly prices: Array<{ id: string; cents: number }> = [];
  readonly handled: string[] = [];

  @SqsMessageHandler(PriceSet, { queue: 'prices' })
  @Idempotent({ fingerprint: true })
  async onPrice(event: PriceSet): Promise<void> {
    this.prices.push({ id: event.id, cents: event.price.cents });
  }

  @SqsMessageHandler(NoteAdded, { queue: 'notes' })
  @Idempotent({ fingerprint: (payload: { note: string }) => ({ note: new SelfWrapping(payload.note) }) })
  async onNote(event: NoteAdded): Promise<void> {
    this.handled.push(event.id);
  }

  @SqsMessageHandler(Thumbnail, { queue: 'media' })
  @Idempotent({ fingerprint: true, key: (_: Thumbnail, ctx: SqsContext) => ctx.messageAttribute('id') })
  async onThumbnail(event: Thumbnail, ctx: SqsContext): Promise<void> {
    this.handled.push(`${ctx.messageAttribute('id')}:${event.body.length}`);
  }

  // The key is the EventBridge event's id (the default with an envelope); the payload its detail.
  @SqsMessageHandler(OrderPlaced, { queue: 'bus' })
  @Idempotent({ fingerprint: true })
  async onOrder(event: OrderPlaced): Promise<void> {
    this.handled.push(`${event.orderId}:${event.amount}`);
  }
}

const queues = [
  { name: 'prices' },
  { name: 'notes' },
  { name: 'media', decoder: 'base64' as const },
  { name: 'bus', envelope: 'eventbridge' as const },
];

describe.each([
  ['the direct path', false],
  ["Nest's interceptor pipeline", true],
])('payload fingerprints of the payload as it arrived, on %s', (_, nestPipeline) => {
  let app: TestApp;
  let ledger: Ledger;
  beforeEach(async () => {
    app = await createTestApp({
      idempotency: { store: new InMemoryIdempotencyStore() },
      sqs: { queues },
      providers: [Ledger],
      client: { defaultQueue: 'prices' },
      nestPipeline,
    });
    ledger = app.get(Ledger);
  });
  afterEach(() => app.close());

  const expectMismatch = (result: { status: string; result: { error?: Error } }) => {
    expect(result.status).toBe('FAILED');
    expect(result.result.error).toBeInstanceOf(IdempotencyFingerprintMismatchError);
  };

  it('tells apart two prices a @Transform made into a class with #private state: the second is a mismatch', async () => {
    expect((await app.sqs.send({ type: 'price_set', id: 'p1', price: 1000 })).status).toBe('OK');
    // A copy, its keys in another order (another producer's serializer): the same payload.
    expect((await app.sqs.send({ price: 1000, id: 'p1', type: 'price_set' })).status).toBe('DUPLICATE');
    expectMismatch(await app.sqs.send({ type: 'price_set', id: 'p1', price: 99999 }));
    expect(ledger.prices).toEqual([{ id: 'p1', cents: 1000 }]);
  });

  it('tells apart two queries a @Transform made into URLSearchParams', async () => {
    const send = (query: string) => app.sqs.send({ type: 'price_set', id: 'q1', price: 1, query });
    expect((await send('price=1000')).status).toBe('OK');
    expect((await send('price=1000')).status).toBe('DUPLICATE');
    expectMismatch(await send('price=99999'));
  });

  it('hashes the payload of an event holding a toJSON that wraps itself, and goes on', async () => {
    const send = (note: string) => app.sqs.send({ type: 'price_set', id: 'n1', price: 1, note });
    expect((await send('gift')).status).toBe('OK');
    expect((await send('gift')).status).toBe('DUPLICATE');
    expectMismatch(await send('rush'));
  });

  it('fails a record whose fingerprint function selects a value that is not plain JSON, naming the field; the next one runs', async () => {
    const failed = await app.sqs.send({ type: 'note_added', id: 'x1', note: 'gift' }, { queue: 'notes' });
    expect(failed.status).toBe('FAILED');
    expect(failed.result.error?.message).toContain(`message ${failed.record.messageId} on queue "notes"`);
    expect(failed.result.error?.message).toContain(
      'could not compute the payload fingerprint (fingerprint()) for Ledger.onNote: the field note is a SelfWrapping, not plain JSON',
    );
    expect(failed.result.error).toMatchObject({ code: 'IDEMPOTENCY_ERROR' });
    expect(ledger.handled).toEqual([]);
    // Nothing was claimed: the process and the store go on.
    expect((await app.sqs.send({ type: 'price_set', id: 'x2', price: 5 })).status).toBe('OK');
  });

  it("hashes a 'base64' body by its bytes", async () => {
    const send = (bytes: number[]) =>
      app.sqs.send(Buffer.from(bytes).toString('base64'), {
        queue: 'media',
        messageAttributes: { id: 'img-1' },
      });
    expect((await send([1, 2, 3])).status).toBe('OK');
    expect((await send([1, 2, 3])).status).toBe('DUPLICATE');
    expectMismatch(await send([1, 2, 4]));
    expect(ledger.handled).toEqual(['img-1:3']);
  });

  it("hashes an envelope's event, not the envelope: a copy delivered at another time is a duplicate", async () => {
    const event = (amount: number, time: string) =>
      buildEventBridgeEvent({ orderId: 'o-1', amount }, { id: 'evt-1', time, detailType: 'order_placed' });
    expect((await app.sqs.send(event(5, '2024-05-01T10:00:00Z'), { queue: 'bus' })).status).toBe('OK');
    expect((await app.sqs.send(event(5, '2024-05-01T10:05:00Z'), { queue: 'bus' })).status).toBe('DUPLICATE');
    expectMismatch(await app.sqs.send(event(6, '2024-05-01T10:00:00Z'), { queue: 'bus' }));
    expect(ledger.handled).toEqual(['o-1:5']);
  });
});
