import { Injectable, Module, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Type as TypeOf } from 'class-transformer';
import { IsInt, IsOptional, IsString, ValidateNested } from 'class-validator';
import {
  createSqsLambdaHandler,
  Idempotent,
  IdempotencyConfigurationError,
  IdempotentOptions,
  SqsContext,
  SqsEvent,
  SqsMessageHandler,
  SqsModule,
  SqsModuleOptions,
  IdempotencyModule,
} from '../lib';
import {
  buildCloudEvent,
  buildEventBridgeEvent,
  buildLambdaContext,
  buildS3Notification,
  buildSnsNotification,
  buildSqsEvent,
  buildSqsRecord,
} from '../lib/testing';
import { CapturingLogger } from './support/capturing-logger';
import { createTestApp, TestApp } from './support/test-app';

/**
 * The start-up check of a handler's key path (#48): it refuses only a path no message can carry (validation's
 * whitelist strips what the event class does not declare), warns where it cannot tell (a field the class does
 * not validate, a subtype lacking it), and knows that an envelope's id is the default key on queues whose
 * envelope names one. Each app it lets start keys its messages: a second copy of a key is a duplicate, another
 * key runs.
 */

const WHITELIST: SqsModuleOptions = { validation: { validatorOptions: { whitelist: true } } };

/** A module whose one handler takes `eventClass` under `@Idempotent(idempotent)`; `keys` lists the keys it ran. */
function handlerOf(eventClass: Type<unknown>, idempotent: string | IdempotentOptions = {}, queue?: string) {
  @Injectable()
  class Handler {
    readonly keys: unknown[] = [];
    @SqsMessageHandler(eventClass, queue === undefined ? {} : { queue })
    @Idempotent(idempotent)
    async on(_event: object, ctx: SqsContext): Promise<void> {
      this.keys.push(ctx.state.idempotencyKey);
    }
  }
  @Module({ providers: [Handler], exports: [Handler] })
  class HandlerModule {}
  return { Handler, HandlerModule };
}

async function appOf(
  eventClass: Type<unknown>,
  idempotent: string | IdempotentOptions = {},
  sqs: SqsModuleOptions = {},
  queue?: string,
) {
  const { Handler, HandlerModule } = handlerOf(eventClass, idempotent, queue);
  const app = await createTestApp({ sqs, imports: [HandlerModule] });
  return { app, handler: app.get(Handler) };
}

/** The key-path warnings the app logged at start-up. */
function keyPathWarnings(app: TestApp): string[] {
  return app.logs.find('warn', ' reads its key from ').map((line) => line.message);
}

/**
 * Sends `message('k-1')` twice (two messages, one key) and `message('k-2')`: the second is a duplicate, the
 * others run, and the handler saw `keys`.
 */
async function expectKeyed(
  app: TestApp,
  handler: { keys: unknown[] },
  message: (key: string) => unknown,
  keys: unknown[] = ['k-1', 'k-2'],
  queue?: string,
): Promise<void> {
  const options = queue === undefined ? {} : { queue };
  expect((await app.sqs.send(message('k-1'), options)).status).toBe('OK');
  const copy = await app.sqs.send(message('k-1'), options);
  expect(copy.status).toBe('DUPLICATE');
  expect((await app.sqs.send(message('k-2'), options)).status).toBe('OK');
  expect(handler.keys).toEqual(keys);
}

abstract class Payment {
  @IsString() method!: string;
}
class CardPayment extends Payment {
  @IsString() paymentId!: string;
  @IsString() last4!: string;
}
class BankPayment extends Payment {
  @IsString() paymentId!: string;
  @IsString() iban!: string;
}
class VoucherPayment extends Payment {
  @IsString() code!: string;
}

const SUBTYPES = [
  { name: 'card', value: CardPayment },
  { name: 'bank', value: BankPayment },
];

@SqsEvent('payment_received')
class PaymentReceived {
  @IsString() id!: string;
  @ValidateNested()
  @TypeOf(() => Payment, {
    discriminator: { property: 'kind', subTypes: SUBTYPES },
    keepDiscriminatorProperty: true,
  })
  payment!: Payment;
}

@SqsEvent('voucher_or_card')
class VoucherOrCard {
  @ValidateNested()
  @TypeOf(() => Payment, {
    discriminator: { property: 'kind', subTypes: [...SUBTYPES, { name: 'voucher', value: VoucherPayment }] },
  })
  payment!: Payment;
}

const payment = (paymentId: string, kind = 'card') => ({
  type: 'payment_received',
  id: `message-of-${paymentId}`,
  payment: { kind, method: 'online', paymentId, last4: '4242', iban: 'DE00' },
});

describe('a key path on discriminated subtypes (class-transformer discriminator)', () => {
  it('starts without a warning when every subtype declares it, and keys by it', async () => {
    for (const sqs of [{}, WHITELIST]) {
      const { app, handler } = await appOf(PaymentReceived, 'payment.paymentId', sqs);
      expect(keyPathWarnings(app)).toEqual([]);
      // Two payment kinds, one key each.
      expect((await app.sqs.send(payment('k-1'))).status).toBe('OK');
      expect((await app.sqs.send(payment('k-1', 'bank'))).status).toBe('DUPLICATE');
      expect((await app.sqs.send(payment('k-2', 'bank'))).status).toBe('OK');
      expect(handler.keys).toEqual(['k-1', 'k-2']);
      await app.close();
    }
  });

  it('warns, naming the subtype that lacks it, and starts (whitelist or not)', async () => {
    for (const sqs of [{}, WHITELIST]) {
      const { app, handler } = await appOf(VoucherOrCard, 'payment.paymentId', sqs);
      expect(keyPathWarnings(app)).toEqual([
        expect.stringContaining(
          '@Idempotent() on Handler.on reads its key from "payment.paymentId", and VoucherPayment (the type of ' +
            '"payment") declares no property "paymentId"; it declares code, method',
        ),
      ]);
      await expectKeyed(app, handler, (key) => ({
        payment: { kind: 'card', method: 'online', paymentId: key, last4: '1' },
      }));
      await app.close();
    }
  });
});

@SqsEvent('order_placed')
class OrderPlaced {
  @IsString() id!: string;
  @IsInt() amount!: number;
}

class Provenance {
  @IsString() source!: string;
}

@SqsEvent('order_traced')
class OrderTraced {
  @IsString() id!: string;
  @ValidateNested() @TypeOf(() => Provenance) metadata!: Provenance;
}

describe('a key path the event class does not declare', () => {
  const placed = (orderRef: string) => ({ type: 'order_placed', id: 'same-id', amount: 1, orderRef });
  const traced = (eventId: string) => ({
    type: 'order_traced',
    id: 'same-id',
    metadata: { source: 'shop', eventId },
  });

  it('a field the payload carries and the class does not validate: starts with a warning, keyed by it', async () => {
    const { app, handler } = await appOf(OrderPlaced, 'orderRef');
    expect(app.logs.find('warn', ' reads its key from ').map((line) => line.context)).toEqual([
      'Idempotency',
    ]);
    expect(keyPathWarnings(app)).toEqual([
      '@Idempotent() on Handler.on reads its key from "orderRef", and OrderPlaced declares no property "orderRef"; ' +
        "it declares id, amount: without validation's whitelist it is on the event as the message carries it, " +
        'unchecked, and a message without it fails for want of a key. If "orderRef" is a typo, fix the keyPath; ' +
        'else declare the field on the event class with a validation rule (e.g. @IsString()), so that a message ' +
        'without it is refused as invalid.',
    ]);
    await expectKeyed(app, handler, placed);
    await app.close();
  });

  it('metadata.eventId where the nested class validates other fields: starts with a warning, keyed by it', async () => {
    const { app, handler } = await appOf(OrderTraced, 'metadata.eventId');
    expect(keyPathWarnings(app)).toEqual([
      expect.stringContaining(
        'reads its key from "metadata.eventId", and Provenance (the type of "metadata") declares no property "eventId"; it declares source: without',
      ),
    ]);
    await expectKeyed(app, handler, traced);
    await app.close();
  });

  it("with validation's whitelist, which strips it from every event, the app does not start", async () => {
    for (const [eventClass, keyPath, reason] of [
      [OrderPlaced, 'orderRef', 'OrderPlaced declares no property "orderRef"; it declares id, amount'],
      [
        OrderTraced,
        'metadata.eventId',
        'Provenance (the type of "metadata") declares no property "eventId"; it declares source',
      ],
    ] as const) {
      const starting = appOf(eventClass, keyPath, WHITELIST);
      await expect(starting).rejects.toThrow(IdempotencyConfigurationError);
      await expect(appOf(eventClass, keyPath, WHITELIST)).rejects.toThrow(
        `@Idempotent() on Handler.on: the key path "${keyPath}" cannot exist on its event: ${reason}, and ` +
          "validation's whitelist strips what it does not declare. Every record would fail for want of a key. " +
          'Fix the keyPath, or declare the field on the event class with a validation rule (e.g. @IsString()).',
      );
    }
  });

  it('stops an app started without the test client too (a polling service, its own init)', async () => {
    const { HandlerModule } = handlerOf(OrderPlaced, 'orderRef');
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot(), SqsModule.forRoot(WHITELIST), HandlerModule],
    }).compile();
    moduleRef.useLogger(false);
    let thrown: unknown;
    await moduleRef.init().catch((error: unknown) => (thrown = error));
    // Nest's close awaits the failed init again; nothing of this app holds a handle to release.
    await moduleRef.close().catch(() => undefined);
    expect(thrown).toBeInstanceOf(IdempotencyConfigurationError);
    expect((thrown as Error).message).toContain(
      '@Idempotent() on Handler.on: the key path "orderRef" cannot exist on its event',
    );
  });

  it('the whitelist of one queue refuses only the handlers bound to it', async () => {
    const queues = [
      { name: 'strict', validation: { validatorOptions: { whitelist: true } } },
      { name: 'lenient' },
    ];
    await expect(appOf(OrderPlaced, 'orderRef', { queues }, 'strict')).rejects.toThrow(
      'the key path "orderRef" cannot exist on its event',
    );
    const { app, handler } = await appOf(OrderPlaced, 'orderRef', { queues }, 'lenient');
    expect(keyPathWarnings(app)).toHaveLength(1);
    await expectKeyed(app, handler, placed, undefined, 'lenient');
    await app.close();
  });

  it('with requireKey: false, a stripped key path is a warning: its records run without dedup', async () => {
    const { app, handler } = await appOf(OrderPlaced, { keyPath: 'orderRef', requireKey: false }, WHITELIST);
    expect(keyPathWarnings(app)).toEqual([
      expect.stringContaining(
        "validation's whitelist strips it from every event, and a message without it runs without dedup",
      ),
    ]);
    expect((await app.sqs.send(placed('k-1'))).status).toBe('OK');
    expect((await app.sqs.send(placed('k-1'))).status).toBe('OK');
    expect(handler.keys).toEqual([undefined, undefined]);
    await app.close();
  });
});

class Line {
  @IsString() sku!: string;
}

@SqsEvent('basket_checked_out')
class BasketCheckedOut {
  @IsString() id!: string;
  @ValidateNested({ each: true }) @TypeOf(() => Line) lines!: Line[];
}

class Trace {
  @IsString() eventId!: string;
}

@SqsEvent('order_audited')
class OrderAudited {
  @IsString() id!: string;
  @IsOptional() @ValidateNested() @TypeOf(() => Trace) trace?: Trace;
}

class AuditedEvent {
  @IsString() eventId!: string;
}

@SqsEvent('refund_issued')
class RefundIssued extends AuditedEvent {
  @IsInt() cents!: number;
}

describe('key paths through arrays, optional nested objects and inherited fields', () => {
  it('an array element: "lines.0.sku" is followed into the element class', async () => {
    for (const sqs of [{}, WHITELIST]) {
      const { app, handler } = await appOf(BasketCheckedOut, 'lines.0.sku', sqs);
      expect(keyPathWarnings(app)).toEqual([]);
      await expectKeyed(app, handler, (sku) => ({
        type: 'basket_checked_out',
        id: 'b',
        lines: [{ sku }, { sku: 'x' }],
      }));
      await app.close();
    }
    await expect(appOf(BasketCheckedOut, 'lines.0.skus', WHITELIST)).rejects.toThrow(
      'Line (the type of "lines.0") declares no property "skus"; it declares sku',
    );
  });

  it('an optional nested object: no warning; a message without it fails for want of a key, and is retried', async () => {
    const { app, handler } = await appOf(OrderAudited, 'trace.eventId', WHITELIST);
    expect(keyPathWarnings(app)).toEqual([]);
    await expectKeyed(app, handler, (eventId) => ({ type: 'order_audited', id: 'a', trace: { eventId } }));
    const untraced = await app.sqs.send({ type: 'order_audited', id: 'a' });
    expect(untraced.status).toBe('FAILED');
    expect(untraced.result.error?.message).toContain('keyPath "trace.eventId"');
    await app.close();
  });

  it('an inherited field is declared', async () => {
    const { app, handler } = await appOf(RefundIssued, 'eventId', WHITELIST);
    expect(keyPathWarnings(app)).toEqual([]);
    await expectKeyed(app, handler, (eventId) => ({ type: 'refund_issued', eventId, cents: 5 }));
    await app.close();
  });
});

/** The docs' EventBridge event: no `id` of its own, keyed by the envelope's. */
@SqsEvent('Order Shipped')
class OrderShipped {
  @IsString() orderId!: string;
}

/** The record of an S3 notification, which has no `id` either. */
class ObjectCreated {
  @IsString() eventName!: string;
}

describe("the default key on queues whose envelope names an id (the envelope's id is the key)", () => {
  const shipped = { orderId: 'o-1', carrier: 'ups' };
  const envelopes = {
    eventbridge: (id: string) => buildEventBridgeEvent(shipped, { id, detailType: 'Order Shipped' }),
    cloudevents: (id: string) => buildCloudEvent(shipped, { id, type: 'Order Shipped' }),
    s3: (sequencer: string) => buildS3Notification({ key: 'a.txt', sequencer }),
  } as const;
  const keyOf = (kind: keyof typeof envelopes, id: string) =>
    kind === 's3' ? `test-bucket/a.txt@${id}` : id;
  const classOf = (kind: keyof typeof envelopes) => (kind === 's3' ? ObjectCreated : OrderShipped);

  it.each(Object.keys(envelopes) as Array<keyof typeof envelopes>)(
    "%s: no warning, on the queue or the module, named or 'auto'; a redelivered envelope is a duplicate",
    async (kind) => {
      for (const [sqs, queue] of [
        [{ queues: [{ name: 'shipments', envelope: kind }] }, 'shipments'],
        [{ envelope: kind }, undefined],
        [{ envelope: 'auto' }, undefined],
      ] as const) {
        const { app, handler } = await appOf(classOf(kind), {}, sqs as SqsModuleOptions, queue);
        expect(keyPathWarnings(app)).toEqual([]);
        await expectKeyed(app, handler, envelopes[kind], [keyOf(kind, 'k-1'), keyOf(kind, 'k-2')], queue);
        await app.close();
      }
    },
  );

  it('a raw queue, or SNS (which names no id), still warns that the class has no id', async () => {
    for (const sqs of [
      {},
      { envelope: 'sns' },
      { queues: [{ name: 'shipments', envelope: 'eventbridge' }, { name: 'raw' }] },
    ] as const) {
      const { app } = await appOf(
        OrderShipped,
        {},
        sqs as SqsModuleOptions,
        'queues' in sqs ? 'raw' : undefined,
      );
      expect(keyPathWarnings(app)).toEqual([
        expect.stringContaining(
          '@Idempotent() on Handler.on reads its key from "id" (the default), and OrderShipped declares no property "id"',
        ),
      ]);
      await app.close();
    }
    const { app } = await appOf(OrderShipped, {}, { envelope: 'sns' });
    const sent = await app.sqs.send(buildSnsNotification({ type: 'Order Shipped', orderId: 'o-1' }));
    expect(sent.status).toBe('FAILED');
    await app.close();
  });

  it('a keyPath set on the module is read from the event inside, and checked as such', async () => {
    const { Handler, HandlerModule } = handlerOf(OrderShipped, {}, 'shipments');
    const app = await createTestApp({
      idempotency: { keyPath: 'orderId' },
      sqs: { queues: [{ name: 'shipments', envelope: 'eventbridge' }] },
      imports: [HandlerModule],
    });
    expect(keyPathWarnings(app)).toEqual([]);
    const byOrder = (orderId: string) => buildEventBridgeEvent({ orderId }, { detailType: 'Order Shipped' });
    await expectKeyed(app, app.get(Handler), byOrder, undefined, 'shipments');
    await app.close();
  });

  it("a Lambda handler's own envelope option counts", async () => {
    const logger = new CapturingLogger();
    const { Handler, HandlerModule } = handlerOf(OrderShipped);
    @Module({ imports: [IdempotencyModule.forRoot(), SqsModule.forRoot(), HandlerModule] })
    class AppModule {}
    const lambda = createSqsLambdaHandler(AppModule, { envelope: 'eventbridge', nestOptions: { logger } });
    const event = (id: string) =>
      buildSqsEvent([buildSqsRecord(buildEventBridgeEvent(shipped, { id, detailType: 'Order Shipped' }))]);
    expect(await lambda(event('k-1'), buildLambdaContext())).toEqual({ batchItemFailures: [] });
    expect(await lambda(event('k-1'), buildLambdaContext())).toEqual({ batchItemFailures: [] });
    expect((await lambda.getApp()).get(Handler).keys).toEqual(['k-1']);
    expect(logger.find('warn', ' reads its key from ')).toEqual([]);
    await lambda.close();

    const raw = new CapturingLogger();
    const rawLambda = createSqsLambdaHandler(AppModule, { nestOptions: { logger: raw } });
    await rawLambda.getApp();
    expect(raw.find('warn', 'reads its key from "id" (the default)')).toHaveLength(1);
    await rawLambda.close();
  });
});
