import { Injectable, Module, Type } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { IsString } from 'class-validator';
import { Idempotent, IdempotencyModule, SqsEvent, SqsMessageHandler } from '../lib';
import { buildLambdaContext, buildSqsEvent, buildSqsRecord } from '../lib/testing';
import { DynamoDbIdempotencyStore } from '../lib/stores/dynamodb';
import { deferred } from './fixtures/orders.fixture';
import { orderCreated, ShippingLog, shipmentsPerOrder, startShippingApp } from './fixtures/shipping.fixture';
import { DynaliteServer, startDynalite } from './support/dynalite';
import { waitFor } from './support/sqs-queues';
import { usePollingHarness } from './support/polling-harness';
import { useLambdaSandboxes } from './support/lambda-sandboxes';

/**
 * The DynamoDB store behind both hosts: Lambda sandboxes (each `createSqsLambdaHandler` is a cold
 * start with its own app and its own client) and polling apps on fauxqs. Dedup holds between
 * sandboxes and between instances because the state is in the table, not in a process.
 */
describe('DynamoDbIdempotencyStore behind both hosts', () => {
  let dynamo: DynaliteServer;
  let table: string;

  beforeAll(async () => {
    dynamo = await startDynalite();
    table = await dynamo.createTable();
  });
  afterAll(() => dynamo.stop());

  describe('Lambda: two sandboxes of one function', () => {
    @SqsEvent('invoice_issued')
    class InvoiceIssued {
      @IsString() id!: string;
      @IsString() invoice!: string;
    }

    /** Everything every sandbox issued, in order (the "side effect" the dedup protects). */
    const issued: string[] = [];
    /** Every handler call, as it starts. */
    const entered: string[] = [];
    const holds = new Map<string, Promise<void>>();
    const failNext = new Set<string>();

    @Injectable()
    class Invoices {
      @SqsMessageHandler(InvoiceIssued)
      @Idempotent()
      async onIssued(event: InvoiceIssued): Promise<void> {
        entered.push(event.invoice);
        await holds.get(event.invoice);
        if (failNext.delete(event.invoice)) throw new Error(`cannot issue ${event.invoice}`);
        issued.push(event.invoice);
      }
    }

    /** The function's module, as a user writes it: the store creates its client from config. */
    const functionModule = (): Type<unknown> => {
      @Module({
        imports: [
          IdempotencyModule.forRoot({
            store: new DynamoDbIdempotencyStore({ tableName: table, clientConfig: dynamo.clientConfig }),
            keyPrefix: `lambda-${process.pid}`,
            service: 'invoices',
          }),
        ],
        providers: [Invoices],
      })
      class FunctionModule {}
      return FunctionModule;
    };

    const { sandbox } = useLambdaSandboxes(functionModule);

    const invoice = (id: string, name = `inv-${id}`) => ({ type: 'invoice_issued', id, invoice: name });
    const event = (...bodies: unknown[]) =>
      buildSqsEvent(bodies.map((body) => buildSqsRecord(body, { queue: 'invoices' })));

    it('dedups across sandboxes, fails in-flight copies and failures for redelivery, retries them elsewhere', async () => {
      const [one, two] = [sandbox(), sandbox()];
      expect(await one(event(invoice('1')), buildLambdaContext())).toEqual({ batchItemFailures: [] });
      // A producer retry reaches the other sandbox: acked as a duplicate.
      expect(await two(event(invoice('1')), buildLambdaContext())).toEqual({ batchItemFailures: [] });

      // A copy arrives in sandbox two while sandbox one still runs the original: it fails on purpose.
      const hold = deferred();
      holds.set('inv-2', hold.promise);
      const original = one(event(invoice('2')), buildLambdaContext());
      await waitFor(() => entered.includes('inv-2'), 'the original in its handler');
      const copy = event(invoice('2'));
      expect(await two(copy, buildLambdaContext())).toEqual({
        batchItemFailures: [{ itemIdentifier: copy.Records[0].messageId }],
      });
      hold.resolve();
      expect(await original).toEqual({ batchItemFailures: [] });
      // Its redelivery, after the original completed: a duplicate.
      expect(await two(copy, buildLambdaContext())).toEqual({ batchItemFailures: [] });

      // A failure releases the key: the redelivery runs in the other sandbox.
      failNext.add('inv-3');
      const third = event(invoice('3'));
      expect(await one(third, buildLambdaContext())).toEqual({
        batchItemFailures: [{ itemIdentifier: third.Records[0].messageId }],
      });
      expect(await two(third, buildLambdaContext())).toEqual({ batchItemFailures: [] });
      expect(await one(third, buildLambdaContext())).toEqual({ batchItemFailures: [] });

      expect(issued).toEqual(['inv-1', 'inv-2', 'inv-3']);
      expect(entered).toEqual(['inv-1', 'inv-2', 'inv-3', 'inv-3']);
    });
  });

  describe('polling: two instances on one fauxqs queue', () => {
    const polling = usePollingHarness();
    const { queues } = polling;

    it('runs each order once across both instances, through producer retries, copies and a failed attempt', async () => {
      const queue = await queues.create('dynamodb', { visibilityTimeout: 1 });
      const options = { queues: [{ name: 'orders', url: queue.url }], batchSize: 5, visibilityTimeout: 1 };
      const apps: TestingModule[] = [];
      for (let i = 0; i < 2; i++) {
        // Each instance has its own store and client, as separate processes would.
        const store = new DynamoDbIdempotencyStore({ tableName: table, clientConfig: dynamo.clientConfig });
        apps.push(await polling.start(startShippingApp({ ...options, store })));
      }
      const logs = apps.map((app) => app.get(ShippingLog));
      const slow = new Promise<void>((resolve) => setTimeout(resolve, 40));
      for (let n = 0; n < 20; n++) logs.forEach((log) => log.holds.set(`poll-${n}`, slow));
      // One order's first attempt fails (on whichever instance takes it): its redelivery ships it.
      logs.forEach((log) => log.failures.set('poll-7', 1));

      const bodies = Array.from({ length: 20 }, (_, n) =>
        orderCreated(`poll-${queue.name}-${n}`, `poll-${n}`),
      );
      const copies = [...bodies, ...bodies, ...bodies];
      for (let i = 0; i < copies.length; i += 10) await queues.sendBatch(queue.url, copies.slice(i, i + 10));

      await waitFor(async () => (await queues.depth(queue.url)) === 0, 'every copy to be acked', 30_000);
      const shipments = shipmentsPerOrder(logs);
      expect(shipments.size).toBe(20);
      expect([...shipments.values()]).toEqual(Array(20).fill(1));
      expect(logs.map((log) => log.calls.length > 0)).toEqual([true, true]);
      // The failed attempt happened, and its redelivery was not taken for a duplicate.
      const attempts = logs.flatMap((log) => log.calls).filter((call) => call.orderId === 'poll-7');
      expect(attempts.length).toBeGreaterThanOrEqual(2);
    });
  });
});
