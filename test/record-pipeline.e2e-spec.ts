import { Injectable } from '@nestjs/common';
import { IdempotencyKey, Idempotent, SqsContext, SqsMessageHandler, SqsRecordLike } from '../lib';
import { IdempotencyStats } from '../lib/center';
import { DataPoint, Histogram, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { METRIC_PREFIX } from '../lib/observability/record-metrics';
import { buildSqsRecord } from '../lib/testing';
import { OrderCreated, OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { RecordingStore } from './support/recording-store';
import { createTestApp, TestApp } from './support/test-app';

/**
 * What the record pipeline guarantees whatever the event: a route of several handlers runs each
 * with a context and a claim of its own and counts each call under its handler; a record that is
 * not even an object is refused by name and the rest of the batch runs; a record built without
 * `eventSource` (a test, a custom host) is an SQS record; and a result's duration is the time the
 * record took.
 */

/** A second idempotent handler of the event OrdersHandler handles: one route, two handlers. */
@Injectable()
class InvoicingHandler {
  readonly keys: Array<string | undefined> = [];
  readonly stateKeys: unknown[] = [];
  @SqsMessageHandler(OrderCreated)
  @Idempotent({ scope: 'order_created.invoice', keyPath: 'orderId' })
  async invoice(_event: OrderCreated, ctx: SqsContext, @IdempotencyKey() key?: string): Promise<void> {
    this.keys.push(key);
    this.stateKeys.push(ctx.state.idempotencyKey);
  }
}

describe('the record pipeline', () => {
  let app: TestApp;
  let store: RecordingStore;
  beforeEach(async () => {
    store = new RecordingStore();
    app = await createTestApp({
      idempotency: { store, stats: {} },
      imports: [OrdersModule],
      providers: [InvoicingHandler],
    });
  });
  afterEach(() => app.close());

  it('runs each handler of a route with its own context and claim, and counts each call under its handler', async () => {
    const {
      results: [first],
    } = await app.sqs.sendRecords([buildSqsRecord(orderCreated('multi-1'))]);
    expect(first.status).toBe('OK');
    const ledger = app.get(OrdersLedger);
    const invoicing = app.get(InvoicingHandler);
    expect(ledger.calls).toBe(1);
    expect(invoicing.keys).toHaveLength(1);
    // Two claims, one per handler (their scopes differ), each completed.
    const claimed = store.calls.filter((call) => call.method === 'tryAcquire').map((call) => call.key);
    const completed = store.calls.filter((call) => call.method === 'markComplete').map((call) => call.key);
    expect(new Set(claimed).size).toBe(2);
    expect(completed.sort()).toEqual([...claimed].sort());
    // Each handler reads its own key from a context of its own; the record reports the key of the
    // route's first handler (the app's own provider, InvoicingHandler, is discovered before OrdersModule's).
    expect(ledger.stateKeys).toEqual(['multi-1']);
    expect(invoicing.stateKeys).toEqual(['order-multi-1']);
    expect(first.key).toBe('order-multi-1');

    // The redelivery is a duplicate for both: neither runs again.
    expect((await app.sqs.send(orderCreated('multi-1'))).status).toBe('DUPLICATE');
    expect(ledger.calls).toBe(1);
    expect(invoicing.keys).toHaveLength(1);

    const snapshot = await app.get(IdempotencyStats).snapshot();
    const handlers = snapshot.eventTypes.find((type) => type.eventType === 'order_created')!.handlers;
    const countsOf = (name: string) => handlers.find((handler) => handler.handler === name)!.counters;
    for (const name of ['OrdersHandler.onOrderCreated', 'InvoicingHandler.invoice']) {
      expect(countsOf(name)).toMatchObject({ handled: 1, duplicates_completed: 1, failed: 0 });
    }
  });

  it('refuses a record that is not an object, saying what it is, and runs the rest of the batch', async () => {
    const valid = buildSqsRecord(orderCreated('after-junk'));
    const { results } = await app.sqs.sendRecords([null, 7, valid] as unknown as SqsRecordLike[]);
    expect(results.map((result) => result.status)).toEqual(['INVALID', 'INVALID', 'OK']);
    expect(results[0].error?.message).toContain('the record is null, not an object');
    expect(results[1].error?.message).toContain('the record is number, not an object');
    expect(app.get(OrdersLedger).calls).toBe(1);
  });

  it('refuses a record without a messageId by saying so, without inventing one', async () => {
    const nameless = { ...buildSqsRecord(orderCreated('nameless')), messageId: undefined };
    const { results } = await app.sqs.sendRecords([nameless as unknown as SqsRecordLike]);
    expect(results[0]).toMatchObject({ status: 'INVALID', messageId: '' });
    expect(results[0].error?.message).toBe(
      'Message (no messageId) on queue "test-queue" is invalid: the record has no messageId. It was not handled ' +
        'and will reach the dead-letter queue after maxReceiveCount receives; fix the producer or the event ' +
        'class, then redrive it.',
    );
    const { results: junk } = await app.sqs.sendRecords([null as unknown as SqsRecordLike]);
    expect(junk[0].error?.message).toMatch(
      /^Message \(no messageId\) on queue "[^"]+" is invalid: the record is null, not an object\. /,
    );
  });

  it('refuses a record that is not an object on a FIFO queue too (the batch rules read it first)', async () => {
    const valid = buildSqsRecord(orderCreated('fifo-after-junk'), { queue: 'orders.fifo', groupId: 'g' });
    const { results } = await app.sqs.sendRecords([null, valid] as unknown as SqsRecordLike[]);
    expect(results.map((result) => result.status)).toEqual(['INVALID', 'OK']);
  });

  it('takes a record built without eventSource as an SQS record', async () => {
    const record = { ...buildSqsRecord(orderCreated('sourceless')), eventSource: undefined };
    const { results } = await app.sqs.sendRecords([record as unknown as SqsRecordLike]);
    expect(results[0].status).toBe('OK');
    expect(app.get(OrdersLedger).calls).toBe(1);
  });

  it('measures each handler call for the duration histogram, within the time the batch took', async () => {
    const reader = new (class extends MetricReader {
      protected async onForceFlush(): Promise<void> {}
      protected async onShutdown(): Promise<void> {}
    })();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const measured = await createTestApp({
      idempotency: { stats: { meterProvider } },
      imports: [OrdersModule],
    });
    try {
      const started = performance.now();
      await measured.sqs.sendRecords([
        buildSqsRecord(orderCreated('m-1')),
        buildSqsRecord(orderCreated('m-2')),
      ]);
      const elapsedMs = performance.now() - started;
      const { resourceMetrics } = await reader.collect();
      const points = resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .filter((metric) => metric.descriptor.name === `${METRIC_PREFIX}.record.duration`)
        .flatMap((metric) => metric.dataPoints as DataPoint<Histogram>[]);
      const calls = points.filter((point) => point.attributes.handler === 'OrdersHandler.onOrderCreated');
      expect(calls.reduce((count, point) => count + point.value.count, 0)).toBe(2);
      const total = calls.reduce((sum, point) => sum + point.value.sum!, 0);
      expect(total).toBeGreaterThan(0);
      // The two records run concurrently: each call fits in the batch's time, not their sum.
      const longest = Math.max(...calls.map((point) => point.value.max!));
      expect(longest).toBeLessThanOrEqual(elapsedMs);
    } finally {
      await measured.close();
      await meterProvider.shutdown();
    }
  });

  it('reports the time a record took as its duration', async () => {
    const started = performance.now();
    const { results } = await app.sqs.sendRecords([buildSqsRecord(orderCreated('timed'))]);
    const elapsed = performance.now() - started;
    expect(results[0].durationMs).toBeGreaterThanOrEqual(0);
    expect(results[0].durationMs).toBeLessThanOrEqual(elapsed);
  });
});
