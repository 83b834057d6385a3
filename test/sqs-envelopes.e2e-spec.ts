import { Injectable } from '@nestjs/common';
import { IsIn, IsInt, IsString, Min } from 'class-validator';
import { Idempotent, SqsContext, SqsEvent, SqsMessageHandler, SqsModuleOptions } from '../lib';
import { SqsEnvelope } from '../lib/types';
import {
  buildCloudEvent,
  buildEventBridgeEvent,
  buildS3Notification,
  buildS3TestEvent,
  buildSnsNotification,
} from '../lib/testing';
import { OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { RecordingStore } from './support/recording-store';
import { createTestApp } from './support/test-app';

/**
 * Envelopes: the event inside an SNS notification, an EventBridge event, an S3 notification or a
 * CloudEvent is routed, validated in full and keyed like a raw message, and what the envelope said
 * is on the context.
 */

async function appWith(sqs: SqsModuleOptions, providers: unknown[] = []) {
  const store = new RecordingStore();
  const app = await createTestApp({
    idempotency: { store },
    sqs,
    imports: [OrdersModule],
    providers: providers as never,
  });
  return { ...app, store, ledger: app.get(OrdersLedger) };
}

describe('SNS envelopes', () => {
  @Injectable()
  class Witness {
    readonly envelopes: SqsEnvelope[][] = [];
    @SqsMessageHandler(class Paid {})
    async onPaid(_event: object, ctx: SqsContext): Promise<void> {
      this.envelopes.push([...ctx.envelopes]);
    }
  }

  it('routes, validates in full and keys the Message inside', async () => {
    const { sqs, ledger, store, close } = await appWith({ envelope: 'sns' });
    const sent = await sqs.send(buildSnsNotification(orderCreated('e-1', 'o-1'), { subject: 'new order' }));
    expect(sent.status).toBe('OK');
    expect(sent.result.eventType).toBe('order_created');
    expect(ledger.count('o-1')).toBe(1);

    // The reported bug: an enveloped event with amount 0 came back OK. Its class is validated.
    const zero = await sqs.send(buildSnsNotification(orderCreated('e-2', 'o-2', 0)));
    expect(zero.status).toBe('INVALID');
    expect(zero.result.error?.message).toContain(
      'OrderCreated fails validation: amount must not be less than 1',
    );

    // A publisher's retry is a new SNS message (a new MessageId) with the same event: a duplicate.
    const retry = await sqs.send(buildSnsNotification(orderCreated('e-1', 'o-1')));
    expect(retry.status).toBe('DUPLICATE');
    expect(retry.result.key).toBe('e-1');
    expect(ledger.count('o-1')).toBe(1);
    expect(store.calls.filter((call) => call.method === 'tryAcquire').map((call) => call.key)).toEqual([
      'idempotency:order_created:e-1',
      'idempotency:order_created:e-1',
    ]);
    await close();
  });

  it('puts what SNS said on the context, and routes by its message attributes', async () => {
    const { sqs, get, close } = await appWith(
      { queues: [{ name: 'payments', envelope: 'sns', discriminator: { attribute: 'eventType' } }] },
      [Witness],
    );
    const sent = await sqs.send(
      buildSnsNotification(
        { id: 'p-1' },
        {
          messageId: 'sns-1',
          topicArn: 'arn:aws:sns:eu-west-1:123456789012:payments',
          subject: 'paid',
          messageAttributes: { eventType: 'paid', amount: 12 },
        },
      ),
      { queue: 'payments' },
    );
    expect(sent.status).toBe('OK');
    expect(get(Witness).envelopes).toEqual([
      [
        {
          kind: 'sns',
          messageId: 'sns-1',
          topicArn: 'arn:aws:sns:eu-west-1:123456789012:payments',
          subject: 'paid',
          timestamp: expect.any(String),
          sequenceNumber: undefined,
          messageAttributes: {
            eventType: { Type: 'String', Value: 'paid' },
            amount: { Type: 'Number', Value: '12' },
          },
        },
      ],
    ]);
    await close();
  });

  it('refuses a raw message on a queue that takes SNS notifications, saying why', async () => {
    const { sqs, close } = await appWith({ envelope: 'sns' });
    const raw = await sqs.send(orderCreated('e-1'));
    expect(raw.status).toBe('INVALID');
    expect(raw.result.error?.message).toContain(
      'the body is not an SNS notification: its "Type" is missing, not "Notification" (a raw delivery? then the queue takes no envelope)',
    );
    await close();
  });

  it('SqsTestClient wraps an event in an envelope', async () => {
    const { sqs, ledger, close } = await appWith({ envelope: 'sns' });
    expect((await sqs.send(orderCreated('e-3', 'o-3'), { envelope: 'sns' })).status).toBe('OK');
    expect(ledger.count('o-3')).toBe(1);
    await close();
  });
});

describe('EventBridge envelopes', () => {
  @SqsEvent('Order Shipped')
  class OrderShipped {
    @IsString() orderId!: string;
    @IsIn(['ups', 'dhl']) carrier!: string;
  }

  @Injectable()
  class Shipments {
    readonly shipped: string[] = [];
    readonly keys: string[] = [];
    @SqsMessageHandler(OrderShipped)
    @Idempotent()
    async onShipped(event: OrderShipped, ctx: SqsContext): Promise<void> {
      this.shipped.push(`${event.orderId} by ${event.carrier} (${ctx.envelope('eventbridge')?.source})`);
      this.keys.push(ctx.state.idempotencyKey!);
    }
  }

  it('routes by detail-type, validates the detail, keys by the EventBridge id', async () => {
    const { sqs, get, close } = await appWith({ envelope: 'eventbridge' }, [Shipments]);
    const detail = { orderId: 'o-1', carrier: 'ups' };
    const event = buildEventBridgeEvent(detail, {
      detailType: 'Order Shipped',
      id: 'eb-1',
      source: 'com.example.shipping',
    });
    expect((await sqs.send(event)).status).toBe('OK');
    // The same EventBridge event delivered again: a duplicate, whatever the detail has.
    expect((await sqs.send(event)).status).toBe('DUPLICATE');
    // Another event with the same detail is another event.
    expect(
      (await sqs.send(buildEventBridgeEvent(detail, { detailType: 'Order Shipped', id: 'eb-2' }))).status,
    ).toBe('OK');
    expect(get(Shipments).keys).toEqual(['eb-1', 'eb-2']);
    expect(get(Shipments).shipped[0]).toBe('o-1 by ups (com.example.shipping)');

    const bad = await sqs.send(
      buildEventBridgeEvent({ orderId: 'o-2', carrier: 'pigeon' }, { detailType: 'Order Shipped' }),
    );
    expect(bad.status).toBe('INVALID');
    expect(bad.result.error?.message).toContain('carrier must be one of the following values: ups, dhl');

    const unknown = await sqs.send(buildEventBridgeEvent({}, { detailType: 'Order Lost' }));
    expect(unknown.result.error?.message).toContain('no handler for event type "Order Lost"');
    await close();
  });

  it('keys by a field of the detail when a key source is configured', async () => {
    const keyed = await createTestApp({
      idempotency: { keyPath: 'orderId' },
      sqs: { envelope: 'eventbridge' },
      providers: [Shipments],
    });
    const detail = { orderId: 'o-9', carrier: 'dhl' };
    expect(
      (await keyed.sqs.send(buildEventBridgeEvent(detail, { detailType: 'Order Shipped' }))).result.key,
    ).toBe('o-9');
    // A different EventBridge event of the same order: a duplicate by this key.
    expect(
      (await keyed.sqs.send(buildEventBridgeEvent(detail, { detailType: 'Order Shipped' }))).status,
    ).toBe('DUPLICATE');
    await keyed.close();
  });
});

describe('S3 notifications', () => {
  class ObjectEvent {
    @IsString() eventName!: string;
  }
  @Injectable()
  class Uploads {
    readonly seen: string[] = [];
    @SqsMessageHandler(ObjectEvent)
    @Idempotent()
    async onObject(event: ObjectEvent, ctx: SqsContext): Promise<void> {
      const s3 = ctx.envelope('s3')!;
      this.seen.push(`${event.eventName} ${s3.bucket}/${s3.objectKey}`);
    }
  }

  it('hands the record over, keyed by bucket, key and sequencer; acks s3:TestEvent as skipped', async () => {
    const store = new RecordingStore();
    const app = await createTestApp({
      idempotency: { store },
      sqs: { envelope: 's3' },
      providers: [Uploads],
    });
    const test = await app.sqs.send(buildS3TestEvent('uploads'));
    expect(test.status).toBe('SKIPPED');
    expect(test.response.batchItemFailures).toEqual([]);
    expect(test.result.eventType).toBe('s3:TestEvent');
    expect(test.result.error?.message).toContain('s3:TestEvent of bucket "uploads"');
    // Told from a failure by its code, as every error of the library is.
    expect(test.result.error).toMatchObject({ code: 'SQS_ENVELOPE_SKIPPED', name: 'SkippedEnvelopeNotice' });
    expect(app.logs.find('log', 'status=SKIPPED type=s3:TestEvent')).toHaveLength(1);

    const upload = buildS3Notification({
      bucket: 'uploads',
      key: 'photos/cat 1.jpg', // the key in the bucket: the notification carries photos/cat+1.jpg
      sequencer: '0055AED6DCD90281E5',
    });
    expect(JSON.stringify(upload)).toContain('"key":"photos/cat+1.jpg"');
    const first = await app.sqs.send(upload);
    expect(first.status).toBe('OK');
    expect(first.result.key).toBe('uploads/photos/cat+1.jpg@0055AED6DCD90281E5');
    // S3 delivers at least once: the same notification again is a duplicate.
    expect((await app.sqs.send(upload)).status).toBe('DUPLICATE');
    expect(app.get(Uploads).seen).toEqual(['ObjectCreated:Put uploads/photos/cat 1.jpg']);
    expect(store.calls.filter((call) => call.key.includes('TestEvent'))).toEqual([]);
    await app.close();
  });

  it('carries a key as S3 encodes it, and the handler reads the key of the bucket (a+b.txt stays a+b.txt)', async () => {
    const app = await createTestApp({ sqs: { envelope: 's3' }, providers: [Uploads] });
    const upload = buildS3Notification({ bucket: 'b', key: 'docs/a+b c%.txt' });
    expect(JSON.stringify(upload)).toContain('"key":"docs/a%2Bb+c%25.txt"');
    expect((await app.sqs.send(upload)).status).toBe('OK');
    expect(app.get(Uploads).seen).toEqual(['ObjectCreated:Put b/docs/a+b c%.txt']);
    await app.close();
  });

  it('through SNS (S3 → SNS → SQS)', async () => {
    const app = await createTestApp({ sqs: { envelope: ['sns', 's3'] }, providers: [Uploads] });
    const sent = await app.sqs.send(buildSnsNotification(buildS3Notification({ bucket: 'b', key: 'k' })));
    expect(sent.status).toBe('OK');
    expect(app.get(Uploads).seen).toEqual(['ObjectCreated:Put b/k']);
    await app.close();
  });
});

describe('CloudEvents', () => {
  @SqsEvent('com.example.invoice.issued')
  class InvoiceIssued {
    @IsString() invoiceId!: string;
    @IsInt() @Min(1) total!: number;
  }
  @SqsEvent('com.example.invoice.pdf')
  class InvoicePdf {
    body!: Buffer;
  }
  @Injectable()
  class Invoices {
    readonly seen: unknown[] = [];
    @SqsMessageHandler(InvoiceIssued)
    @Idempotent()
    async onIssued(event: InvoiceIssued, ctx: SqsContext): Promise<void> {
      this.seen.push([event.invoiceId, ctx.state.idempotencyKey, ctx.envelope('cloudevents')?.source]);
    }
    @SqsMessageHandler(InvoicePdf)
    async onPdf(event: InvoicePdf): Promise<void> {
      this.seen.push(event.body);
    }
  }

  it('routes by type, validates data, keys by id; data_base64 reaches the class as { body: Buffer }', async () => {
    const app = await createTestApp({ sqs: { envelope: 'cloudevents' }, providers: [Invoices] });
    const issued = buildCloudEvent(
      { invoiceId: 'i-1', total: 30 },
      { type: 'com.example.invoice.issued', id: 'ce-1', source: '/billing' },
    );
    expect((await app.sqs.send(issued)).status).toBe('OK');
    expect((await app.sqs.send(issued)).status).toBe('DUPLICATE');
    const zero = await app.sqs.send(
      buildCloudEvent({ invoiceId: 'i-2', total: 0 }, { type: 'com.example.invoice.issued' }),
    );
    expect(zero.result.error?.message).toContain('total must not be less than 1');
    const pdf = Buffer.from('%PDF-1.7');
    expect((await app.sqs.send(buildCloudEvent(pdf, { type: 'com.example.invoice.pdf' }))).status).toBe('OK');
    expect(app.get(Invoices).seen).toEqual([['i-1', 'ce-1', '/billing'], pdf]);
    await app.close();
  });
});

describe("envelope: 'auto'", () => {
  it('opens SNS, EventBridge-through-SNS and raw messages on one queue', async () => {
    @SqsEvent('Order Created')
    class OrderCreatedDetail {
      @IsString() orderId!: string;
    }
    @Injectable()
    class Mixed {
      readonly seen: string[] = [];
      @SqsMessageHandler(OrderCreatedDetail)
      async onDetail(event: OrderCreatedDetail, ctx: SqsContext): Promise<void> {
        this.seen.push(`${event.orderId} via ${ctx.envelopes.map((envelope) => envelope.kind).join('+')}`);
      }
    }
    const { sqs, ledger, get, close } = await appWith({ envelope: 'auto' }, [Mixed]);
    expect((await sqs.send(orderCreated('e-1', 'o-1'))).status).toBe('OK');
    expect((await sqs.send(buildSnsNotification(orderCreated('e-2', 'o-2')))).status).toBe('OK');
    const nested = buildSnsNotification(
      buildEventBridgeEvent({ orderId: 'o-3' }, { detailType: 'Order Created' }),
    );
    expect((await sqs.send(nested)).status).toBe('OK');
    expect(ledger.count('o-1') + ledger.count('o-2')).toBe(2);
    expect(get(Mixed).seen).toEqual(['o-3 via sns+eventbridge']);
    // A user's own event with a `Type` field is not mistaken for an SNS notification.
    const own = await sqs.send({ ...orderCreated('e-4', 'o-4'), Type: 'Notification', Message: 'hi' });
    expect(own.status).toBe('OK');
    expect(ledger.count('o-4')).toBe(1);
    await close();
  });
});
