import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Type } from 'class-transformer';
import { IsInt, IsString, Min, ValidateNested } from 'class-validator';
import {
  IdempotencyModule,
  InvalidSqsMessageError,
  SqsContext,
  SqsEvent,
  SqsMessageHandler,
  SqsModule,
} from '../lib';
import { OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { RecordingStore } from './support/recording-store';
import { createTestApp, TestApp } from './support/test-app';

describe('routing, decoding and validation', () => {
  let app: TestApp;
  let ledger: OrdersLedger;
  let store: RecordingStore;

  beforeEach(async () => {
    store = new RecordingStore();
    app = await createTestApp({ idempotency: { store }, imports: [OrdersModule] });
    ledger = app.get(OrdersLedger);
  });
  afterEach(() => app.close());

  it('routes by the body field `type` to the event class named by @SqsEvent or the snake_case class name', async () => {
    const { statuses, results } = await app.sqs.sendBatch([
      orderCreated('e1', 'o1'),
      { type: 'order_cancelled', id: 'c1', orderId: 'o2' },
    ]);
    expect(statuses).toEqual(['OK', 'OK']);
    expect(results.map((result) => result.eventType)).toEqual(['order_created', 'order_cancelled']);
    expect(ledger.count('o1')).toBe(1);
    expect(ledger.cancelled).toEqual(['o2']);
  });

  it('hands the handler a validated instance of the event class', async () => {
    const { status } = await app.sqs.send(orderCreated('e1'));
    expect(status).toBe('OK');
    expect(ledger.keys).toEqual(['e1']);
  });

  it.each([
    ['an empty body', '', 'the body is empty'],
    ['a body that is not JSON', '{"type": order', 'the body is not JSON'],
    ['a JSON string', '"order_created"', 'the body is JSON string, not an object'],
    ['a JSON number', '42', 'the body is JSON number, not an object'],
    ['a JSON array', '[{"type":"order_created"}]', 'the body is JSON array, not an object'],
    ['JSON null', 'null', 'the body is JSON null, not an object'],
    [
      'an unknown type',
      JSON.stringify({ type: 'order_exploded', id: 'x' }),
      'no handler for event type "order_exploded"',
    ],
    [
      'no type on a queue with several types',
      JSON.stringify({ id: 'x' }),
      'it has no event type (no body field "type")',
    ],
    [
      'a failing validation',
      JSON.stringify({ ...orderCreated('e1'), amount: 0 }),
      'OrderCreated fails validation: amount must not be less than 1',
    ],
    [
      'a constructor key',
      JSON.stringify({ ...orderCreated('e1'), constructor: { name: 'x' } }),
      'the key "constructor"',
    ],
  ])(
    'fails %s as INVALID, naming the message and the reason, and claims no key',
    async (_case, body, reason) => {
      const { status, result, record, response } = await app.sqs.send(body);
      expect(status).toBe('INVALID');
      expect(result.error?.name).toBe('InvalidSqsMessageError');
      expect(result.error?.message).toContain(`Message ${record.messageId} on queue "test-queue" is invalid`);
      expect(result.error?.message).toContain(reason);
      expect(result.error?.message).toContain('dead-letter queue');
      // The type no handler takes is data on the error (the Center lists it), not only words in its message.
      expect((result.error as InvalidSqsMessageError).unroutedEventType).toBe(
        _case === 'an unknown type' ? 'order_exploded' : undefined,
      );
      expect(response.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
      expect(store.calls).toEqual([]);
      expect(ledger.calls).toBe(0);
    },
  );

  it('accepts a body with a byte order mark', async () => {
    expect((await app.sqs.send('\ufeff' + JSON.stringify(orderCreated('e1')))).status).toBe('OK');
  });

  it('an invalid record does not stop the rest of the batch', async () => {
    const { statuses, response, records } = await app.sqs.sendBatch([
      orderCreated('e1'),
      'not json',
      orderCreated('e2'),
    ]);
    expect(statuses).toEqual(['OK', 'INVALID', 'OK']);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: records[1].messageId }]);
  });

  it('logs one line per record with its status, type, key and message id', async () => {
    const { record } = await app.sqs.send('not json');
    const ok = await app.sqs.send(orderCreated('e7'));
    const invalid = app.logs.find('error', `status=INVALID`);
    expect(invalid).toHaveLength(1);
    expect(invalid[0].message).toContain(`messageId=${record.messageId}`);
    const okLine = app.logs.find('log', `messageId=${ok.record.messageId}`);
    expect(okLine).toHaveLength(1);
    expect(okLine[0].message).toMatch(
      /^status=OK type=order_created key=e7 .*queue=test-queue receiveCount=1 durationMs=/,
    );
  });
});

describe('discriminators', () => {
  @SqsEvent('shipment_sent')
  class ShipmentSent {
    @IsString() shipmentId!: string;
  }

  class Address {
    @IsString() city!: string;
  }

  @SqsEvent('parcel_lost')
  class ParcelLost {
    @IsString() parcelId!: string;
    @ValidateNested() @Type(() => Address) lastSeen!: Address;
  }

  @Injectable()
  class Shipping {
    readonly seen: string[] = [];
    @SqsMessageHandler(ShipmentSent)
    async onSent(event: ShipmentSent, ctx: SqsContext): Promise<void> {
      this.seen.push(`${ctx.eventType}:${event.shipmentId}`);
    }
    @SqsMessageHandler(ParcelLost)
    async onLost(event: ParcelLost): Promise<void> {
      this.seen.push(`parcel_lost:${event.lastSeen.city}`);
    }
  }

  async function appWith(discriminator: unknown) {
    return createTestApp({ sqs: { discriminator: discriminator as never }, providers: [Shipping] });
  }

  it('reads a dot path in the body', async () => {
    const app = await appWith({ field: 'meta.kind' });
    expect((await app.sqs.send({ meta: { kind: 'shipment_sent' }, shipmentId: 's1' })).status).toBe('OK');
    expect(app.get(Shipping).seen).toEqual(['shipment_sent:s1']);
    await app.close();
  });

  it('reads a message attribute', async () => {
    const app = await appWith({ attribute: 'eventType' });
    const sent = await app.sqs.send(
      { shipmentId: 's2' },
      { messageAttributes: { eventType: 'shipment_sent' } },
    );
    expect(sent.status).toBe('OK');
    const missing = await app.sqs.send({ shipmentId: 's3' });
    expect(missing.result.error?.message).toContain('no message attribute "eventType"');
    await app.close();
  });

  it('calls a discriminator function', async () => {
    const app = await appWith((body: Record<string, unknown>) =>
      'parcelId' in body ? 'parcel_lost' : 'shipment_sent',
    );
    const { statuses, results } = await app.sqs.sendBatch([
      { parcelId: 'p', lastSeen: { city: 'Oslo' } },
      { parcelId: 'p', lastSeen: { city: 7 } },
    ]);
    expect(statuses).toEqual(['OK', 'INVALID']);
    expect(results[1].error?.message).toContain('lastSeen.city must be a string');
    expect(app.get(Shipping).seen).toEqual(['parcel_lost:Oslo']);
    await app.close();
  });

  it('refuses a discriminator that cannot work at bootstrap, with a clear error', async () => {
    await expect(appWith({ field: '' })).rejects.toThrow('discriminator must be');
    await expect(appWith({ field: 'a..b' })).rejects.toThrow('empty or padded segment');
    await expect(appWith({ header: 'x' })).rejects.toThrow(
      'discriminator: unknown option "header"; did you mean "field"? Known options: field, attribute.',
    );
  });

  it('refuses bad batch options at bootstrap', async () => {
    await expect(createTestApp({ sqs: { concurrency: 0 } })).rejects.toThrow(
      'concurrency must be a positive integer',
    );
    await expect(createTestApp({ sqs: { fifoFailureMode: 'stop' as never } })).rejects.toThrow(
      "fifoFailureMode must be 'isolate_groups' or 'halt_batch'",
    );
  });
});

describe('queues', () => {
  class Ping {
    @IsInt() @Min(0) n!: number;
  }
  class Pong {
    @IsInt() n!: number;
  }

  @Injectable()
  class Handlers {
    readonly seen: string[] = [];
    @SqsMessageHandler(Ping, { queue: 'pings' })
    async onPing(event: Ping): Promise<void> {
      this.seen.push(`ping ${event.n}`);
    }
    @SqsMessageHandler(Pong, { queue: 'pongs' })
    async onPong(event: Pong): Promise<void> {
      this.seen.push(`pong ${event.n}`);
    }
  }

  it('a queue with a single event type needs no discriminator; handlers only see their queue', async () => {
    const app = await createTestApp({ providers: [Handlers] });
    expect((await app.sqs.send({ n: 1 }, { queue: 'pings' })).status).toBe('OK');
    expect((await app.sqs.send({ n: 2 }, { queue: 'pongs' })).status).toBe('OK');
    // One event class and no discriminator configured: the queue's messages are that class, even
    // one whose body has a `type` field of its own; it is never routed across queues.
    const typed = await app.sqs.send({ type: 'pong', n: 3 }, { queue: 'pings' });
    expect(typed.status).toBe('OK');
    const nobody = await app.sqs.send({ n: 4 }, { queue: 'elsewhere' });
    expect(nobody.result.error?.message).toContain('no @SqsMessageHandler() listens on queue "elsewhere"');
    expect(app.get(Handlers).seen).toEqual(['ping 1', 'pong 2', 'ping 3']);
    await app.close();
  });

  it('refuses one event type name on two classes of one queue at bootstrap', async () => {
    @SqsEvent('dup')
    class A {}
    @SqsEvent('dup')
    class B {}
    @Injectable()
    class Clash {
      @SqsMessageHandler(A)
      async a(): Promise<void> {}
      @SqsMessageHandler(B)
      async b(): Promise<void> {}
    }
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({})],
      providers: [Clash],
    }).compile();
    await expect(moduleRef.init()).rejects.toThrow('event type "dup" names both A and B');
  });
});
