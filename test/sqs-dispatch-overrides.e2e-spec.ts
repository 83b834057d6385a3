import { Injectable, Module } from '@nestjs/common';
import { IsString } from 'class-validator';
import {
  createSqsLambdaHandler,
  IdempotencyModule,
  SqsEvent,
  SqsLambdaHandler,
  SqsMessageHandler,
  SqsModule,
  SqsModuleOptions,
} from '../lib';
import { buildLambdaContext, buildSqsEvent, buildSqsRecord, SqsTestClient } from '../lib/testing';
import { createTestApp } from './support/test-app';

/**
 * A host's dispatch options (the Lambda handler's, a test client's) override SqsModule's, even for a
 * queue the module already resolved at bootstrap with its own: each set of options has its own
 * resolved queues. And the options' errors at bootstrap name the queue they break.
 */

@SqsEvent('invoice_issued')
class InvoiceIssued {
  @IsString() id!: string;
  @IsString() invoice!: string;
}

@Injectable()
class Invoices {
  readonly issued: unknown[] = [];
  @SqsMessageHandler(InvoiceIssued)
  async onIssued(event: InvoiceIssued): Promise<void> {
    if (event.invoice === 'bad') throw new Error('cannot issue');
    this.issued.push(event.invoice);
  }
}

function appModule(sqs: SqsModuleOptions) {
  @Module({ imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot(sqs)], providers: [Invoices] })
  class InvoicesApp {}
  return InvoicesApp;
}

/** SqsModule configures the queue, so it resolves it (without any host's options) at bootstrap. */
const DECLARED = { queues: [{ name: 'invoices.fifo' }] };

const invoice = (id: string, value: unknown, groupId = id) =>
  buildSqsRecord({ type: 'invoice_issued', id, invoice: value }, { queue: 'invoices.fifo', groupId });

describe("a host's dispatch options on a queue SqsModule resolved without them", () => {
  let handler: SqsLambdaHandler | undefined;
  afterEach(async () => {
    await handler?.close();
    handler = undefined;
  });

  it("applies the Lambda handler's fifoFailureMode and validation; a client without them keeps the module's", async () => {
    handler = createSqsLambdaHandler(appModule(DECLARED), {
      fifoFailureMode: 'halt_batch',
      validation: { validate: false },
      nestOptions: { logger: false },
    });
    // halt_batch: the record of another group after the failure is failed unattempted.
    const halted = [invoice('h1', 'bad'), invoice('h2', 'inv-2')];
    expect((await handler(buildSqsEvent(halted), buildLambdaContext())).batchItemFailures).toEqual(
      halted.map((record) => ({ itemIdentifier: record.messageId })),
    );
    // validate: false: an invoice that is no string is taken as it comes.
    expect(
      (await handler(buildSqsEvent([invoice('v1', 7)]), buildLambdaContext())).batchItemFailures,
    ).toEqual([]);
    const app = await handler.getApp();
    expect(app.get(Invoices).issued).toEqual([7]);

    // The same app through a client without those options: SqsModule's isolate_groups and validation.
    const plain = new SqsTestClient(app);
    const { statuses } = await plain.sendRecords([
      invoice('p1', 'bad'),
      invoice('p2', 'inv-p2'),
      invoice('p3', 8),
    ]);
    expect(statuses).toEqual(['FAILED', 'OK', 'INVALID']);
    expect(app.get(Invoices).issued).toEqual([7, 'inv-p2']);
  });

  it("applies a test client's options on a queue the module resolved", async () => {
    const app = await createTestApp({
      sqs: DECLARED,
      providers: [Invoices],
      client: { fifoFailureMode: 'halt_batch' },
    });
    try {
      const { statuses } = await app.sqs.sendRecords([invoice('c1', 'bad'), invoice('c2', 'inv-c2')]);
      expect(statuses).toEqual(['FAILED', 'FAILED']);
      expect(app.get(Invoices).issued).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it("refuses the Lambda handler's unusable options at bootstrap, though the module's were fine", async () => {
    handler = createSqsLambdaHandler(appModule(DECLARED), { concurrency: 0, nestOptions: { logger: false } });
    await expect(handler.getApp()).rejects.toThrow(
      'SQS queue "*": concurrency must be a positive integer, got 0.',
    );
  });
});

describe('bootstrap errors of dispatch options', () => {
  it('name the configured queue whose options cannot work', async () => {
    await expect(
      createTestApp({ sqs: { queues: [{ name: 'orders', fifoFailureMode: 'stop' as never }] } }),
    ).rejects.toThrow(
      `SQS queue "orders": fifoFailureMode must be 'isolate_groups' or 'halt_batch', got stop.`,
    );
    await expect(
      createTestApp({ sqs: { queues: [{ name: 'orders' }, { name: 'refunds', concurrency: 1.5 }] } }),
    ).rejects.toThrow('SQS queue "refunds": concurrency must be a positive integer, got 1.5.');
  });

  it('name "*" (every queue) for the options of the module, and for handlers bound to no queue', async () => {
    await expect(createTestApp({ sqs: { concurrency: 0 } })).rejects.toThrow(
      'SQS queue "*": concurrency must be a positive integer, got 0.',
    );
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
    await expect(createTestApp({ providers: [Clash] })).rejects.toThrow(
      'Queue "*": event type "dup" names both A and B',
    );
  });
});
