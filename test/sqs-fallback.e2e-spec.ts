import { Injectable } from '@nestjs/common';
import { IsInt, Min } from 'class-validator';
import { Idempotent, SqsContext, SqsEvent, SqsFallbackHandler, SqsMessageHandler } from '../lib';
import { IdempotencyStats } from '../lib/center';
import { OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { createTestApp } from './support/test-app';

/**
 * Messages no handler claims: a fallback handler takes them, else they are invalid (and reach the
 * DLQ). A queue with one event class takes every message, unless a discriminator is configured or
 * a fallback handler is there.
 */

@Injectable()
class Leftovers {
  readonly seen: Array<[string | undefined, Record<string, unknown>]> = [];
  failNext = false;

  @SqsFallbackHandler()
  @Idempotent({ requireKey: false })
  async onUnclaimed(payload: Record<string, unknown>, ctx: SqsContext): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('archive unavailable');
    }
    this.seen.push([ctx.eventType, payload]);
  }
}

describe('fallback handlers', () => {
  it('take the types no handler claims, and messages without a type, with the payload as it is', async () => {
    const app = await createTestApp({ imports: [OrdersModule], providers: [Leftovers] });
    const { statuses, response } = await app.sqs.sendBatch([
      orderCreated('e-1', 'o-1'),
      { type: 'order_exploded', id: 'x-1', debris: 3 },
      { id: 'x-2' },
    ]);
    expect(statuses).toEqual(['OK', 'OK', 'OK']);
    expect(response.batchItemFailures).toEqual([]);
    expect(app.get(OrdersLedger).count('o-1')).toBe(1);
    expect(app.get(Leftovers).seen).toEqual([
      ['order_exploded', { type: 'order_exploded', id: 'x-1', debris: 3 }],
      ['*', { id: 'x-2' }],
    ]);
    // A claimed type still goes to its class, validated: the fallback is not a way around validation.
    const invalid = await app.sqs.send(orderCreated('e-2', 'o-2', 0));
    expect(invalid.status).toBe('INVALID');
    expect(app.get(Leftovers).seen).toHaveLength(2);
    await app.close();
  });

  it("beside a queue's one event class: warned at start-up, since the class then gets only its own type", async () => {
    @SqsEvent('payment_captured')
    class PaymentCaptured {
      @IsInt() @Min(1) amount!: number;
    }
    @Injectable()
    class Payments {
      readonly seen: number[] = [];
      @SqsMessageHandler(PaymentCaptured)
      async onCaptured(event: PaymentCaptured): Promise<void> {
        this.seen.push(event.amount);
      }
    }
    const app = await createTestApp({ providers: [Payments, Leftovers] });
    const warnings = app.logs.find('warn', 'is the one event class beside the fallback handler');
    expect(warnings).toEqual([
      expect.objectContaining({
        context: 'SqsModule',
        message: expect.stringContaining(
          'On every queue, PaymentCaptured is the one event class beside the fallback handler Leftovers.onUnclaimed: ' +
            'it receives only bodies whose type is "payment_captured"',
        ),
      }),
    ]);
    // What the warning says: a body typed otherwise (or not at all) is the fallback's, silently.
    expect((await app.sqs.send({ type: 'PaymentCaptured', amount: 5 })).status).toBe('OK');
    expect(app.get(Payments).seen).toEqual([]);
    await app.close();

    const routed = await createTestApp({
      sqs: { discriminator: { field: 'type' } },
      providers: [Payments, Leftovers],
    });
    expect(routed.logs.find('warn', 'beside the fallback handler')).toEqual([]);
    await routed.close();
  });

  it('beside the one event class of a declared queue: warned naming that queue', async () => {
    @SqsEvent('refund_issued')
    class RefundIssued {
      @IsInt() @Min(1) amount!: number;
    }
    @Injectable()
    class Refunds {
      @SqsMessageHandler(RefundIssued, { queue: 'refunds' })
      async onRefund(): Promise<void> {}

      @SqsFallbackHandler({ queue: 'refunds' })
      async onOther(): Promise<void> {}
    }
    const app = await createTestApp({ sqs: { queues: [{ name: 'refunds' }] }, providers: [Refunds] });
    expect(app.logs.find('warn', 'beside the fallback handler').map((line) => line.message)).toEqual([
      expect.stringMatching(
        /^On queue "refunds", RefundIssued is the one event class beside the fallback handler Refunds\.onOther: /,
      ),
    ]);
    await app.close();
  });

  it('run like any handler: idempotent, and a failure is redelivered', async () => {
    const app = await createTestApp({ idempotency: { stats: {} }, providers: [Leftovers] });
    const leftovers = app.get(Leftovers);
    leftovers.failNext = true;
    const failed = await app.sqs.send({ type: 'mystery', id: 'm-1' });
    expect(failed.status).toBe('FAILED');
    expect(failed.response.batchItemFailures).toEqual([{ itemIdentifier: failed.record.messageId }]);
    expect((await app.sqs.sendRecords([failed.record])).statuses).toEqual(['OK']);
    expect((await app.sqs.send({ type: 'mystery', id: 'm-1' })).status).toBe('DUPLICATE');
    const snapshot = await app.get(IdempotencyStats).snapshot();
    const row = snapshot.eventTypes.find((type) => type.eventType === '*');
    expect(row?.handlers.map((handler) => handler.handler)).toEqual(['Leftovers.onUnclaimed']);
    await app.close();
  });

  it("keyed by the payload's id whatever validation strips: it takes payloads unvalidated, so no key path is judged", async () => {
    const app = await createTestApp({
      idempotency: {},
      sqs: { validation: { validatorOptions: { whitelist: true } } },
      providers: [Leftovers],
    });
    expect(app.logs.find('warn', ' reads its key from ')).toEqual([]);
    expect((await app.sqs.send({ type: 'mystery', id: 'w-1' })).status).toBe('OK');
    expect((await app.sqs.send({ type: 'mystery', id: 'w-1' })).status).toBe('DUPLICATE');
    await app.close();
  });

  it('without one, an unclaimed type is invalid, as before', async () => {
    const app = await createTestApp({ imports: [OrdersModule] });
    const sent = await app.sqs.send({ type: 'order_exploded', id: 'x-1' });
    expect(sent.status).toBe('INVALID');
    expect(sent.result.error?.message).toContain('no handler for event type "order_exploded"');
    await app.close();
  });
});

describe('a queue with one event class', () => {
  @SqsEvent('subscription_renewed')
  class SubscriptionRenewed {
    @IsInt() @Min(1) months!: number;
  }
  @Injectable()
  class Renewals {
    readonly seen: number[] = [];
    @SqsMessageHandler(SubscriptionRenewed)
    async onRenewed(event: SubscriptionRenewed): Promise<void> {
      this.seen.push(event.months);
    }
  }

  it('takes every message, even one whose body has a `type` field of its own', async () => {
    const app = await createTestApp({ providers: [Renewals] });
    const sent = await app.sqs.send({ type: 'premium', months: 12 });
    expect(sent.status).toBe('OK');
    expect(sent.result.eventType).toBe('subscription_renewed');
    expect(app.get(Renewals).seen).toEqual([12]);
    await app.close();
  });

  it('checks the type once a discriminator is configured', async () => {
    const app = await createTestApp({ sqs: { discriminator: { field: 'type' } }, providers: [Renewals] });
    const wrong = await app.sqs.send({ type: 'premium', months: 12 });
    expect(wrong.status).toBe('INVALID');
    expect(wrong.result.error?.message).toContain('no handler for event type "premium"');
    expect((await app.sqs.send({ type: 'subscription_renewed', months: 1 })).status).toBe('OK');
    // No type at all: the one class, as before.
    expect((await app.sqs.send({ months: 2 })).status).toBe('OK');
    await app.close();
  });

  it('checks the type when a fallback handler is there to take the rest', async () => {
    const app = await createTestApp({ providers: [Renewals, Leftovers] });
    expect((await app.sqs.send({ type: 'subscription_renewed', months: 3 })).status).toBe('OK');
    expect((await app.sqs.send({ type: 'premium', months: 12 })).status).toBe('OK');
    expect(app.get(Renewals).seen).toEqual([3]);
    expect(app.get(Leftovers).seen).toEqual([['premium', { type: 'premium', months: 12 }]]);
    await app.close();
  });
});
