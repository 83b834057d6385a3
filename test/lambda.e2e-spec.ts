import { Injectable, Module } from '@nestjs/common';
import { IsString } from 'class-validator';
import {
  createSqsLambdaHandler,
  Idempotent,
  IdempotencyModule,
  SqsEvent,
  SqsLambdaHandler,
  SqsMessageHandler,
  SqsContext,
  SqsModule,
} from '../lib';
import { buildLambdaContext, buildSqsEvent, buildSqsRecord } from '../lib/testing';
import { SQS_LAMBDA_HOST } from '../lib/sqs/sqs.constants';

@SqsEvent('invoice_issued')
class InvoiceIssued {
  @IsString() id!: string;
  @IsString() invoice!: string;
}

let instances = 0;
let failBootstraps = 0;

@Injectable()
class Invoices {
  readonly issued: string[] = [];
  /** The queue each handled record came from, as the host named it. */
  readonly queues: string[] = [];
  constructor() {
    instances++;
    if (failBootstraps > 0) {
      failBootstraps--;
      throw new Error('database not reachable at start-up');
    }
  }

  @SqsMessageHandler(InvoiceIssued)
  @Idempotent()
  async onIssued(event: InvoiceIssued, ctx: SqsContext): Promise<void> {
    if (event.invoice === 'bad') throw new Error('cannot issue');
    this.issued.push(event.invoice);
    this.queues.push(ctx.queue);
  }
}

/** A Lambda-only app: it does not even import SqsModule. */
@Module({ imports: [IdempotencyModule.forRoot({})], providers: [Invoices] })
class LambdaAppModule {}

const invoice = (id: string, name = `inv-${id}`) => ({ type: 'invoice_issued', id, invoice: name });
const event = (...bodies: unknown[]) =>
  buildSqsEvent(bodies.map((body) => buildSqsRecord(body, { queue: 'invoices' })));

describe('createSqsLambdaHandler', () => {
  let handler: SqsLambdaHandler;
  beforeEach(() => {
    instances = 0;
    failBootstraps = 0;
  });
  afterEach(() => handler?.close());

  it('answers a partial batch response and dedups across invocations of one sandbox', async () => {
    handler = createSqsLambdaHandler(LambdaAppModule, { nestOptions: { logger: false } });
    const first = event(invoice('1'), invoice('2', 'bad'), 'not json');
    const response = await handler(first, buildLambdaContext());
    expect(response).toEqual({
      batchItemFailures: [
        { itemIdentifier: first.Records[1].messageId },
        { itemIdentifier: first.Records[2].messageId },
      ],
    });
    expect(await handler(event(invoice('1')), buildLambdaContext())).toEqual({ batchItemFailures: [] });
    const app = await handler.getApp();
    expect(app.get(Invoices).issued).toEqual(['inv-1']);
  });

  it('bootstraps once per sandbox, even for concurrent cold invocations', async () => {
    handler = createSqsLambdaHandler(LambdaAppModule, { nestOptions: { logger: false } });
    const responses = await Promise.all([1, 2, 3, 4].map((n) => handler(event(invoice(`c${n}`)))));
    expect(responses).toEqual(Array(4).fill({ batchItemFailures: [] }));
    expect(instances).toBe(1);
  });

  it('retries a failed bootstrap on the next invocation', async () => {
    failBootstraps = 1;
    handler = createSqsLambdaHandler(LambdaAppModule, { nestOptions: { logger: false } });
    await expect(handler(event(invoice('b1')))).rejects.toThrow('database not reachable at start-up');
    expect(await handler(event(invoice('b1')))).toEqual({ batchItemFailures: [] });
    expect(instances).toBe(2);
  });

  it('marks the app as a Lambda host, so pollers never start', async () => {
    handler = createSqsLambdaHandler(LambdaAppModule, { nestOptions: { logger: false } });
    expect((await handler.getApp()).get(SQS_LAMBDA_HOST, { strict: false })).toBe(true);
  });

  it('works with an app that imports SqsModule, and its options override the module', async () => {
    @Module({
      imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({ concurrency: 5 })],
      providers: [Invoices],
    })
    class FullAppModule {}
    handler = createSqsLambdaHandler(FullAppModule, {
      fifoFailureMode: 'halt_batch',
      nestOptions: { logger: false },
    });
    const records = [invoice('h1', 'bad'), invoice('h2')].map((body) =>
      buildSqsRecord(body, { queue: 'invoices.fifo', groupId: body.id }),
    );
    const response = await handler(buildSqsEvent(records));
    // halt_batch: the second record (another group) is failed unattempted after the first failed.
    expect(response.batchItemFailures.map((failure) => failure.itemIdentifier)).toEqual(
      records.map((record) => record.messageId),
    );
  });

  it('runs `configure` once before the first batch', async () => {
    const configured: unknown[] = [];
    handler = createSqsLambdaHandler(LambdaAppModule, {
      nestOptions: { logger: false },
      configure: (app) => void configured.push(app),
    });
    await handler(event(invoice('k1')));
    await handler(event(invoice('k2')));
    expect(configured).toHaveLength(1);
  });

  it('refuses an event that is not an SQS event', async () => {
    handler = createSqsLambdaHandler(LambdaAppModule, { nestOptions: { logger: false } });
    await expect(handler({} as never)).rejects.toThrow('the event has no Records array');
    await expect(handler({} as never)).rejects.toMatchObject({ code: 'SQS_CONFIGURATION' });
    await expect(handler(null as never)).rejects.toThrow('the event has no Records array');
  });

  it('answers a null record as unnamed (Lambda retries the batch) instead of failing the invocation', async () => {
    handler = createSqsLambdaHandler(LambdaAppModule, { nestOptions: { logger: false } });
    const valid = buildSqsRecord(invoice('n1'), { queue: 'invoices' });
    const response = await handler({ Records: [null, valid] } as never);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: '' }]);
  });

  it('names the queue by the first record whose ARN names one, else "default"', async () => {
    handler = createSqsLambdaHandler(LambdaAppModule, { nestOptions: { logger: false } });
    const invoices = (await handler.getApp()).get(Invoices);
    const withoutArn = (body: unknown) => ({ ...buildSqsRecord(body), eventSourceARN: '' });
    const named = buildSqsRecord(invoice('q2'), { queue: 'invoices' });
    expect((await handler(buildSqsEvent([withoutArn(invoice('q1')), named]))).batchItemFailures).toEqual([]);
    expect((await handler(buildSqsEvent([withoutArn(invoice('q3'))]))).batchItemFailures).toEqual([]);
    expect(invoices.queues).toEqual(['invoices', 'invoices', 'default']);
  });

  it('fails records that are not SQS records, and the whole batch when a record has no messageId', async () => {
    handler = createSqsLambdaHandler(LambdaAppModule, { nestOptions: { logger: false } });
    const kinesis = { ...buildSqsRecord(invoice('x')), eventSource: 'aws:kinesis' };
    const nameless = { ...buildSqsRecord(invoice('y')), messageId: undefined } as never;
    const response = await handler(buildSqsEvent([kinesis, nameless, buildSqsRecord(invoice('z'))]));
    // An empty itemIdentifier makes Lambda retry the whole batch: nothing unnamed is acked.
    expect(response.batchItemFailures).toEqual([
      { itemIdentifier: kinesis.messageId },
      { itemIdentifier: '' },
    ]);
  });

  it('caps the idempotency lease by the remaining time (a Lambda timeout kills without cleanup)', async () => {
    handler = createSqsLambdaHandler(LambdaAppModule, { nestOptions: { logger: false } });
    const { IdempotencyStore } = await import('../lib');
    const app = await handler.getApp();
    const store = app.get(IdempotencyStore, { strict: false });
    const claim = jest.spyOn(store, 'tryAcquire');
    await handler(event(invoice('t1')), buildLambdaContext(4_000));
    expect(claim.mock.calls[0][1]).toBeLessThanOrEqual(4_000);
    expect(claim.mock.calls[0][1]).toBeGreaterThan(3_000);
  });
});
