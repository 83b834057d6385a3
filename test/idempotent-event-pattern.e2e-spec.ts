import { CanActivate, Controller, INestMicroservice, UseGuards } from '@nestjs/common';
import {
  ClientProxy,
  ClientProxyFactory,
  Ctx,
  EventPattern,
  Payload,
  RedisContext,
  Transport,
} from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { lastValueFrom } from 'rxjs';
import { Idempotent, IdempotencyKey, IdempotencyModule } from '../lib';
import { IdempotencyStats } from '../lib/center';
import { CapturingLogger } from './support/capturing-logger';
import { RecordingStore } from './support/recording-store';
import { waitFor } from './support/wait-for';
import { requires } from './support/prerequisites';

const withRedis = requires('redis-server');

/**
 * @Idempotent() on @EventPattern() handlers of another Nest transport (context type 'rpc'): here
 * Nest's Redis transport, on the private Redis of the test run. Redis pub/sub delivers every
 * publish to the subscriber, so publishing one event several times is a stream of duplicates.
 */

const effects: string[] = [];
let release: (() => void) | undefined;

@Controller()
class PaymentsController {
  @EventPattern('payment_captured')
  @Idempotent()
  async onCaptured(
    @Payload() event: { id: string; amount: number },
    @Ctx() ctx: RedisContext,
    @IdempotencyKey() key?: string,
  ) {
    if (event.amount === 0) await new Promise<void>((resolve) => (release = resolve));
    effects.push(`${ctx.getChannel()}:${key}`);
  }
}

/** Lets the other handler of the pattern claim first: the order that once made this one skip its claim. */
class SlowGuard implements CanActivate {
  async canActivate(): Promise<boolean> {
    await new Promise((resolve) => setTimeout(resolve, 20));
    return true;
  }
}

// Two handlers of one pattern: Nest's transports hand both the same context object.
@Controller()
class LedgerController {
  @EventPattern('refund_issued')
  @Idempotent({ scope: 'refund_issued.ledger' })
  async onRefund(@Payload() event: { id: string }) {
    effects.push(`ledger:${event.id}`);
  }
}

@Controller()
class ReceiptsController {
  @EventPattern('refund_issued')
  @UseGuards(SlowGuard)
  @Idempotent({ scope: 'refund_issued.receipts' })
  async onRefund(@Payload() event: { id: string }, @IdempotencyKey() key?: string) {
    effects.push(`receipts:${key}`);
  }
}

// One inherited handler method, two subclasses with their own class-level options: two handlers.
class InvoiceAudit {
  @EventPattern('invoice_sent')
  async onInvoice(@Payload() event: { id: string }) {
    effects.push(`${this.constructor.name}:${event.id}`);
  }
}

@Controller()
@Idempotent({ scope: 'invoice_sent.archive' })
class ArchiveController extends InvoiceAudit {}

@Controller()
@Idempotent({ scope: 'invoice_sent.mailer' })
class MailerController extends InvoiceAudit {}

withRedis.describe('@Idempotent() on @EventPattern() handlers (Redis transport)', () => {
  let microservice: INestMicroservice;
  let client: ClientProxy;
  const store = new RecordingStore();

  beforeAll(async () => {
    // Read here, not while Jest collects: without redis-server the block is skipped and REDIS_URL unset.
    const url = new URL(process.env.REDIS_URL!);
    const options = { host: url.hostname, port: Number(url.port) };
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({ store, stats: {} })],
      controllers: [
        PaymentsController,
        LedgerController,
        ReceiptsController,
        ArchiveController,
        MailerController,
      ],
    })
      .setLogger(new CapturingLogger())
      .compile();
    microservice = moduleRef.createNestMicroservice({ transport: Transport.REDIS, options });
    await microservice.listen();
    client = ClientProxyFactory.create({ transport: Transport.REDIS, options });
    await client.connect();
  });
  afterAll(async () => {
    await client.close();
    await microservice.close();
  });
  beforeEach(() => (effects.length = 0));

  it('applies an event once however often it is published', async () => {
    for (let i = 0; i < 5; i++)
      await lastValueFrom(client.emit('payment_captured', { id: 'pay-1', amount: 10 }));
    await lastValueFrom(client.emit('payment_captured', { id: 'pay-2', amount: 10 }));
    // Every publish settled: the counters account for all six, so a stray second run would show now.
    const settled = async () => {
      const snapshot = await microservice.get(IdempotencyStats).snapshot();
      const counters = snapshot.eventTypes.find((type) => type.eventType === 'payment_captured')?.handlers[0]
        ?.counters;
      return (
        counters !== undefined &&
        counters.handled + counters.duplicates_completed + counters.duplicates_in_flight === 6
      );
    };
    await waitFor(settled, 30_000, 'the six publishes of payment_captured to be counted');
    expect(effects).toEqual(['payment_captured:pay-1', 'payment_captured:pay-2']);
    const snapshot = await microservice.get(IdempotencyStats).snapshot();
    expect(
      snapshot.eventTypes.find((type) => type.eventType === 'payment_captured')?.handlers[0],
    ).toMatchObject({
      handler: 'PaymentsController.onCaptured',
      idempotent: true,
      // Counted by @Idempotent() itself: a transport other than the SQS hosts counts nothing.
      counters: { handled: 2, failed: 0 },
    });
    // Pub/sub delivers the copies side by side: a copy may meet the first claim still in flight.
    const { counters } = snapshot.eventTypes.find((type) => type.eventType === 'payment_captured')!
      .handlers[0];
    expect(counters.duplicates_completed + counters.duplicates_in_flight).toBe(4);
  });

  it('an in-flight duplicate throws (so a transport with retries redelivers it) and never runs twice', async () => {
    const stats = microservice.get(IdempotencyStats);
    const totals = async () =>
      (await stats.snapshot()).eventTypes.find((type) => type.eventType === 'payment_captured')!.totals;
    const before = await totals();
    const claimsOfPay3 = () =>
      store.calls.filter((call) => call.method === 'tryAcquire' && call.key.endsWith(':pay-3'));
    await lastValueFrom(client.emit('payment_captured', { id: 'pay-3', amount: 0 }));
    await waitFor(() => release !== undefined, 30_000, 'the first copy of pay-3 to be claimed and held');
    await lastValueFrom(client.emit('payment_captured', { id: 'pay-3', amount: 0 }));
    await waitFor(() => claimsOfPay3().length === 2, 30_000, 'the second copy of pay-3 to meet the claim');
    release!();
    await waitFor(() => effects.length === 1, 30_000, 'the first copy of pay-3 to take effect');
    await lastValueFrom(client.emit('payment_captured', { id: 'pay-3', amount: 0 }));
    await waitFor(() => claimsOfPay3().length === 3, 30_000, 'the third copy of pay-3 to be claimed');
    expect(effects).toEqual(['payment_captured:pay-3']);
    const claims = claimsOfPay3();
    expect(claims.map((call) => call.answer)).toEqual(['ACQUIRED', 'IN_PROGRESS', 'COMPLETED']);
    expect(claims[0].key).toBe('idempotency:payment_captured:pay-3');
    const after = await totals();
    expect({
      handled: after.handled - before.handled,
      duplicates_in_flight: after.duplicates_in_flight - before.duplicates_in_flight,
      duplicates_completed: after.duplicates_completed - before.duplicates_completed,
    }).toEqual({ handled: 1, duplicates_in_flight: 1, duplicates_completed: 1 });
  });

  it('each handler of one pattern makes its own claim, though the transport gives both one context', async () => {
    await lastValueFrom(client.emit('refund_issued', { id: 'ref-1' }));
    await waitFor(() => effects.length === 2);
    const claimsOfRef1 = () =>
      store.calls.filter((call) => call.method === 'tryAcquire' && call.key.endsWith(':ref-1'));
    await lastValueFrom(client.emit('refund_issued', { id: 'ref-1' }));
    await waitFor(() => claimsOfRef1().length === 4, 30_000, 'both handlers to claim the duplicate of ref-1');
    expect(effects.sort()).toEqual(['ledger:ref-1', 'receipts:ref-1']);
    const claims = claimsOfRef1();
    expect(claims.map((call) => `${call.key} ${call.answer}`).sort()).toEqual([
      'idempotency:refund_issued.ledger:ref-1 ACQUIRED',
      'idempotency:refund_issued.ledger:ref-1 COMPLETED',
      'idempotency:refund_issued.receipts:ref-1 ACQUIRED',
      'idempotency:refund_issued.receipts:ref-1 COMPLETED',
    ]);
  });

  it('two subclasses inheriting one handler method each make their own claim on one context', async () => {
    const claimsOf = () =>
      store.calls.filter((call) => call.method === 'tryAcquire' && call.key.endsWith(':inv-1'));
    await lastValueFrom(client.emit('invoice_sent', { id: 'inv-1' }));
    await waitFor(() => effects.length === 2);
    await lastValueFrom(client.emit('invoice_sent', { id: 'inv-1' }));
    await waitFor(() => claimsOf().length === 4, 30_000, 'both subclasses to claim the duplicate of inv-1');
    expect(effects.sort()).toEqual(['ArchiveController:inv-1', 'MailerController:inv-1']);
    expect(
      claimsOf()
        .map((call) => `${call.key} ${call.answer}`)
        .sort(),
    ).toEqual([
      'idempotency:invoice_sent.archive:inv-1 ACQUIRED',
      'idempotency:invoice_sent.archive:inv-1 COMPLETED',
      'idempotency:invoice_sent.mailer:inv-1 ACQUIRED',
      'idempotency:invoice_sent.mailer:inv-1 COMPLETED',
    ]);
  });
});
