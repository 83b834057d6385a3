import { Injectable, Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { IsInt, IsString } from 'class-validator';
import { IdempotencyStats } from '../lib/center';
import type { BatchClaim, BatchCompletion } from '../lib/stores';
import {
  IdempotencyModule,
  IdempotencyModuleOptions,
  createSqsLambdaHandler,
  InMemoryIdempotencyStore,
  Idempotent,
  SqsBatchHandler,
  SqsEvent,
  SqsMessageHandler,
  SqsModule,
  SqsModuleOptions,
} from '../lib';
import { buildLambdaContext, buildSqsEvent, buildSqsRecord, SqsTestClient } from '../lib/testing';
import { AWSXRayPropagator } from '@opentelemetry/propagator-aws-xray';
import { SqsQueueRegistry } from '../lib/sqs/nest/sqs-queue.registry';
import { captureLogs } from './support/captured-logs';
import { waitFor } from './support/sqs-queues';
import { parentIdOf, startTestTracing, TestTracing } from './support/tracing';

/**
 * A span per record (#52), on the Lambda path that SqsTestClient drives: `process <queue>`, CONSUMER,
 * the parent of what the handler starts, linked to the context the message was sent in, with the
 * record's status, its claim and the claim's answer on it; a duplicate runs no handler, an in-flight
 * one fails its span, an invalid one claims nothing. The polling and SNS paths: tracing-queue.e2e-spec.ts.
 */

@SqsEvent('order_created')
class OrderCreated {
  @IsString() id!: string;
  @IsInt() amount!: number;
}

/** Lets a test hold the handler of one record while another arrives. */
class Gate {
  release: () => void = () => undefined;
  entered: Promise<void> = Promise.resolve();
  private opened: Promise<void> = Promise.resolve();
  close(): void {
    let enter!: () => void;
    this.entered = new Promise((resolve) => (enter = resolve));
    this.opened = new Promise((resolve) => (this.release = resolve));
    this.wait = async () => {
      enter();
      await this.opened;
    };
  }
  wait: () => Promise<void> = async () => undefined;
}

@Injectable()
class Orders {
  static readonly gate = new Gate();
  @SqsMessageHandler(OrderCreated)
  @Idempotent()
  async onCreated(event: OrderCreated): Promise<void> {
    await trace.getTracer('app').startActiveSpan('charge card', async (span) => {
      await Orders.gate.wait();
      span.setAttribute('amount', event.amount);
      span.end();
    });
  }
}

describe('a span per record (SqsTestClient, the Lambda path)', () => {
  let tracing: TestTracing;
  let app: TestingModule;
  let client: SqsTestClient;
  let logged: string[];
  const tracer = () => trace.getTracer('test');

  async function start(
    sqs: SqsModuleOptions = {},
    idempotency: IdempotencyModuleOptions = {},
  ): Promise<void> {
    app = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot(idempotency), SqsModule.forRoot(sqs)],
      providers: [Orders],
    }).compile();
    await app.init();
    client = new SqsTestClient(app);
  }

  /** The `traceparent` attribute of a message sent inside `span` (what a producer injects). */
  function sentIn(spanName: string): { attributes: Record<string, string>; sender: ReadableSpan } {
    const attributes: Record<string, string> = {};
    const span = tracer().startSpan(spanName, { kind: SpanKind.PRODUCER });
    propagation.inject(trace.setSpan(context.active(), span), attributes);
    span.end();
    return { attributes, sender: tracing.spans(spanName).at(-1)! };
  }

  beforeEach(() => {
    tracing = startTestTracing();
    logged = captureLogs();
  });
  afterEach(async () => {
    await app?.close();
    await tracing.stop();
  });

  it('opens process <queue> as the parent of the handler span, linked to the sender, with the record facts', async () => {
    await start();
    const { attributes, sender } = sentIn('send orders');
    const { status, result } = await client.send(
      { type: 'order_created', id: 'k1', amount: 5 },
      { queue: 'orders', messageAttributes: attributes, messageId: 'm-1' },
    );
    expect(status).toBe('OK');

    const [record] = tracing.spans('process orders');
    expect(record.kind).toBe(SpanKind.CONSUMER);
    expect(record.links.map((link) => link.context.spanId)).toEqual([sender.spanContext().spanId]);
    expect(record.spanContext().traceId).not.toBe(sender.spanContext().traceId); // linked, not parented
    expect(record.attributes).toMatchObject({
      'messaging.system': 'aws_sqs',
      'messaging.operation.name': 'process',
      'messaging.operation.type': 'process',
      'messaging.destination.name': 'orders',
      'messaging.message.id': 'm-1',
      'idempotent_sqs.status': 'OK',
      'idempotent_sqs.claim': 'ACQUIRED',
      'idempotent_sqs.event_type': 'order_created',
      'idempotent_sqs.handler': 'Orders.onCreated',
      'idempotent_sqs.receive_count': 1,
    });
    expect(record.attributes['idempotent_sqs.key_hash']).toMatch(/^h:[0-9a-f]{16}$/);
    expect(record.attributes).not.toHaveProperty('idempotent_sqs.key');
    expect(record.attributes).not.toHaveProperty('error.type');
    expect(record.status.code).toBe(SpanStatusCode.UNSET);
    const claim = record.events.find((event) => event.name === 'idempotent_sqs.claim');
    expect(claim?.attributes).toMatchObject({ 'idempotent_sqs.claim.answer': 'ACQUIRED' });
    expect(claim?.attributes?.['idempotent_sqs.claim.duration_ms']).toEqual(expect.any(Number));

    const [charge] = tracing.spans('charge card');
    expect(parentIdOf(charge)).toBe(record.spanContext().spanId);
    expect(charge.spanContext().traceId).toBe(record.spanContext().traceId);

    // The record's log line and its result carry the trace id.
    expect(result.traceId).toBe(record.spanContext().traceId);
    expect(logged.find((line) => line.includes('status=OK'))).toContain(
      `traceId=${record.spanContext().traceId}`,
    );
  });

  it('names a completed duplicate DUPLICATE, and its handler starts no span', async () => {
    await start();
    const body = { type: 'order_created', id: 'k2', amount: 5 };
    expect((await client.send(body, { queue: 'orders' })).status).toBe('OK');
    expect((await client.send(body, { queue: 'orders' })).status).toBe('DUPLICATE');

    const [first, second] = tracing.spans('process orders');
    expect(first.attributes['idempotent_sqs.status']).toBe('OK');
    expect(second.attributes).toMatchObject({
      'idempotent_sqs.status': 'DUPLICATE',
      'idempotent_sqs.claim': 'DUPLICATE',
    });
    expect(second.status.code).toBe(SpanStatusCode.UNSET);
    expect(second.events.find((event) => event.name === 'idempotent_sqs.claim')?.attributes).toMatchObject({
      'idempotent_sqs.claim.answer': 'COMPLETED',
    });
    const charges = tracing.spans('charge card');
    expect(charges.map((span) => parentIdOf(span))).toEqual([first.spanContext().spanId]);
  });

  it('fails the span of an in-flight duplicate', async () => {
    await start();
    const body = { type: 'order_created', id: 'k3', amount: 5 };
    Orders.gate.close();
    const running = client.send(body, { queue: 'orders' });
    await Orders.gate.entered;
    const duplicate = await client.send(body, { queue: 'orders' });
    Orders.gate.release();
    expect(duplicate.status).toBe('IN_PROGRESS');
    expect((await running).status).toBe('OK');
    Orders.gate.wait = async () => undefined;

    const failed = tracing
      .spans('process orders')
      .find((span) => span.attributes['idempotent_sqs.status'] === 'IN_PROGRESS')!;
    expect(failed.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed.attributes).toMatchObject({
      'idempotent_sqs.claim': 'IN_PROGRESS',
      'error.type': 'IDEMPOTENCY_IN_PROGRESS',
    });
  });

  it('marks an invalid record INVALID, with an error and no claim event', async () => {
    await start();
    const { status } = await client.send('not json {', { queue: 'orders' });
    expect(status).toBe('INVALID');
    const [record] = tracing.spans('process orders');
    expect(record.attributes['idempotent_sqs.status']).toBe('INVALID');
    expect(record.status.code).toBe(SpanStatusCode.ERROR);
    expect(record.attributes['error.type']).toEqual(expect.any(String));
    expect(record.events.map((event) => event.name)).not.toContain('idempotent_sqs.claim');
    expect(record.attributes).not.toHaveProperty('idempotent_sqs.claim');
  });

  it("keeps the ambient span (a Lambda invocation's) as the parent by default, the sender as a link", async () => {
    await start();
    const { attributes, sender } = sentIn('send orders');
    await tracer().startActiveSpan('invocation', async (invocation) => {
      await client.send(
        { type: 'order_created', id: 'k4', amount: 1 },
        { queue: 'orders', messageAttributes: attributes },
      );
      invocation.end();
    });
    const [invocation] = tracing.spans('invocation');
    const [record] = tracing.spans('process orders');
    expect(parentIdOf(record)).toBe(invocation.spanContext().spanId);
    expect(record.links.map((link) => link.context.spanId)).toEqual([sender.spanContext().spanId]);
  });

  it('opens the same span in a handler made by createSqsLambdaHandler, under the invocation span', async () => {
    @Module({ imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({})], providers: [Orders] })
    class OrdersFunction {}
    app = undefined as unknown as TestingModule; // this test's app is the handler's, closed below
    const handler = createSqsLambdaHandler(OrdersFunction, { nestOptions: { logger: false } });
    try {
      const { attributes, sender } = sentIn('send orders');
      const record = buildSqsRecord(
        { type: 'order_created', id: 'k-lambda', amount: 3 },
        { queue: 'orders', messageAttributes: attributes },
      );
      const response = await tracer().startActiveSpan('invocation', async (invocation) => {
        const answer = await handler(buildSqsEvent([record]), buildLambdaContext());
        invocation.end();
        return answer;
      });
      expect(response.batchItemFailures).toEqual([]);
      const [invocation] = tracing.spans('invocation');
      const [processed] = tracing.spans('process orders');
      expect(processed.kind).toBe(SpanKind.CONSUMER);
      expect(parentIdOf(processed)).toBe(invocation.spanContext().spanId);
      expect(processed.links.map((link) => link.context.spanId)).toEqual([sender.spanContext().spanId]);
      expect(processed.attributes['messaging.message.id']).toBe(record.messageId);
      expect(processed.attributes['idempotent_sqs.status']).toBe('OK');
      const [charge] = tracing.spans('charge card');
      expect(parentIdOf(charge)).toBe(processed.spanContext().spanId);
    } finally {
      await handler.close();
    }
  });

  it('gives each record of a batch handler its own span: status, link to its sender, the handler named', async () => {
    @SqsEvent('order_shipped')
    class OrderShipped {
      @IsString() id!: string;
    }
    @Injectable()
    class Shipments {
      @SqsBatchHandler(OrderShipped)
      @Idempotent()
      async onShipped(events: OrderShipped[]): Promise<void> {
        await trace.getTracer('app').startActiveSpan('bulk insert', async (span) => {
          span.setAttribute('rows', events.length);
          span.end();
        });
      }
    }
    app = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({})],
      providers: [Shipments],
    }).compile();
    await app.init();
    client = new SqsTestClient(app);
    const first = sentIn('send first');
    const second = sentIn('send second');
    const records = [
      buildSqsRecord(
        { type: 'order_shipped', id: 's1' },
        { queue: 'orders', messageAttributes: first.attributes },
      ),
      buildSqsRecord(
        { type: 'order_shipped', id: 's2' },
        { queue: 'orders', messageAttributes: second.attributes },
      ),
      buildSqsRecord({ type: 'order_shipped', id: 's1' }, { queue: 'orders' }),
    ];
    const { statuses } = await client.sendRecords(records);
    expect(statuses).toEqual(['OK', 'OK', 'DUPLICATE']);
    const spans = tracing.spans('process orders');
    const byMessage = new Map(spans.map((span) => [span.attributes['messaging.message.id'], span]));
    expect(
      records.map((record) => byMessage.get(record.messageId)?.attributes['idempotent_sqs.status']),
    ).toEqual(['OK', 'OK', 'DUPLICATE']);
    expect(byMessage.get(records[0].messageId)!.links.map((link) => link.context.spanId)).toEqual([
      first.sender.spanContext().spanId,
    ]);
    expect(byMessage.get(records[1].messageId)!.links.map((link) => link.context.spanId)).toEqual([
      second.sender.spanContext().spanId,
    ]);
    expect(byMessage.get(records[0].messageId)!.attributes['idempotent_sqs.handler']).toBe(
      'Shipments.onShipped',
    );
    expect(byMessage.get(records[2].messageId)!.attributes['idempotent_sqs.handler']).toBeUndefined();
    expect(tracing.spans('bulk insert')).toHaveLength(1);
  });

  it("makes the sender the parent with tracing.parent 'producer', the ambient span a link", async () => {
    await start({ tracing: { parent: 'producer' } });
    const { attributes, sender } = sentIn('send orders');
    await tracer().startActiveSpan('invocation', async (invocation) => {
      await client.send(
        { type: 'order_created', id: 'k5', amount: 1 },
        { queue: 'orders', messageAttributes: attributes },
      );
      invocation.end();
    });
    const [invocation] = tracing.spans('invocation');
    const [record] = tracing.spans('process orders');
    expect(parentIdOf(record)).toBe(sender.spanContext().spanId);
    expect(record.spanContext().traceId).toBe(sender.spanContext().traceId);
    expect(record.links.map((link) => link.context.spanId)).toEqual([invocation.spanContext().spanId]);
  });

  it('puts the key itself on the span only where recordKeys says so', async () => {
    await start({ tracing: { recordKeys: true } });
    await client.send({ type: 'order_created', id: 'k6', amount: 1 }, { queue: 'orders' });
    const [record] = tracing.spans('process orders');
    expect(record.attributes['idempotent_sqs.key']).toBe('k6');
    expect(record.attributes).not.toHaveProperty('idempotent_sqs.key_hash');
  });

  it("shows a traced record's trace id among the Center's recent records", async () => {
    await start({}, { stats: {} });
    const body = { type: 'order_created', id: 'k8', amount: 5 };
    await client.send(body, { queue: 'orders' });
    const { result } = await client.send(body, { queue: 'orders' });
    expect(result.traceId).toMatch(/^[0-9a-f]{32}$/);
    const { records } = await app.get(IdempotencyStats).activity('instance');
    expect(records).toEqual([expect.objectContaining({ status: 'DUPLICATE', traceId: result.traceId })]);
  });

  it('runs a batch claim under a span of its own, linked to the records it serves', async () => {
    // A store with both batch methods: a turn's claims leave as one tryAcquireMany.
    const memory = new InMemoryIdempotencyStore();
    const activeAtCall: Record<string, string | undefined> = {};
    const store = Object.assign(memory, {
      async tryAcquireMany(claims: readonly BatchClaim[]) {
        activeAtCall.tryAcquireMany = trace.getActiveSpan()?.spanContext().spanId;
        return Promise.all(claims.map(({ key, ttlMs, token }) => memory.tryAcquire(key, ttlMs, token)));
      },
      async markCompleteMany(completions: readonly BatchCompletion[]) {
        return Promise.all(
          completions.map(({ key, ttlMs, token }) => memory.markComplete(key, ttlMs, token)),
        );
      },
    });
    await start({}, { store });
    const bodies = ['b1', 'b2', 'b3'].map((id) => ({ type: 'order_created', id, amount: 1 }));
    expect((await client.sendBatch(bodies, { queue: 'orders' })).statuses).toEqual(['OK', 'OK', 'OK']);

    const records = tracing.spans('process orders');
    const [claims] = tracing.spans('idempotency tryAcquireMany');
    expect(claims.parentSpanContext).toBeUndefined();
    expect(claims.attributes['idempotent_sqs.batch.size']).toBe(3);
    expect(claims.links.map((link) => link.context.spanId).sort()).toEqual(
      records.map((record) => record.spanContext().spanId).sort(),
    );
    // The store's own call (and its client's spans) runs under the batch span, not a record's.
    expect(activeAtCall.tryAcquireMany).toBe(claims.spanContext().spanId);
    expect(tracing.spans('idempotency markCompleteMany')).toHaveLength(1);
  });

  it('ends the span of a record that outran its timeout once, FAILED, when the timeout fails it', async () => {
    await start();
    Orders.gate.close();
    const record = buildSqsRecord({ type: 'order_created', id: 'k9', amount: 1 }, { queue: 'orders' });
    const [result] = await app
      .get(SqsQueueRegistry)
      .dispatchBatch([record], { queue: 'orders', recordTimeoutMs: 50 });
    expect(result.status).toBe('FAILED');
    const [span] = tracing.spans('process orders');
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.attributes).toMatchObject({
      'idempotent_sqs.status': 'FAILED',
      'error.type': 'SQS_RECORD_TIMEOUT',
    });
    expect(result.traceId).toBe(span.spanContext().traceId);

    Orders.gate.release();
    Orders.gate.wait = async () => undefined;
    await waitFor(() => tracing.spans('charge card').length === 1, 'the late handler to end');
    await app.close(); // its claim settles before the app closes
    expect(tracing.spans('process orders')).toHaveLength(1);
  });

  it('makes no span with tracing: false', async () => {
    await start({ tracing: false });
    const { result } = await client.send({ type: 'order_created', id: 'k7', amount: 1 }, { queue: 'orders' });
    expect(result.traceId).toBeUndefined();
    expect(tracing.spans('process orders')).toEqual([]);
    expect(tracing.spans('charge card')).toHaveLength(1); // the app's own spans go on
  });
});

describe('the X-Ray trace header (AWSTraceHeader), where the app installs the X-Ray propagator', () => {
  let tracing: TestTracing;
  let app: TestingModule;
  beforeEach(() => {
    tracing = startTestTracing([new AWSXRayPropagator()]);
    captureLogs();
  });
  afterEach(async () => {
    await app?.close();
    await tracing.stop();
  });

  it('links a record with no W3C context to the segment in its AWSTraceHeader', async () => {
    app = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({})],
      providers: [Orders],
    }).compile();
    await app.init();
    const client = new SqsTestClient(app);
    const record = buildSqsRecord({ type: 'order_created', id: 'x1', amount: 2 }, { queue: 'orders' });
    record.attributes.AWSTraceHeader =
      'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';
    expect((await client.sendRecords([record])).statuses).toEqual(['OK']);
    const [span] = tracing.spans('process orders');
    expect(span.links.map((link) => link.context)).toEqual([
      expect.objectContaining({ traceId: '5759e988bd862e3fe1be46a994272793', spanId: '53995c3f42cd8ad8' }),
    ]);
  });
});
