import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { plainToInstance } from 'class-transformer';
import { IsInt, IsString } from 'class-validator';
import { Idempotent, SqsEvent, SqsMessageHandler, SqsProducer } from '../lib';
import { orderPlaced, startFulfilmentService } from './fixtures/fulfilment.fixture';
import { usePollingHarness } from './support/polling-harness';
import { TestTopics } from './support/sns-topics';
import { fauxqsClientConfig, waitFor } from './support/sqs-queues';
import { parentIdOf, startTestTracing, TestTracing } from './support/tracing';

/**
 * Across the queue (#52), on fauxqs: SqsProducer's `send` span and the context it writes into each
 * message, the polling consumer's `process` span linked to it, the handler's span under that; a batch's
 * `create` spans; the app's own context kept; a message with no room left sent without one; an SNS
 * notification linked to its publisher's span.
 */

@SqsEvent('order_created')
class OrderCreated {
  @IsString() id!: string;
  @IsInt() amount!: number;
}
const created = (id: string) => plainToInstance(OrderCreated, { id, amount: 3 });

@Injectable()
class Orders {
  readonly seen: string[] = [];
  @SqsMessageHandler(OrderCreated)
  @Idempotent()
  async onCreated(event: OrderCreated): Promise<void> {
    await trace.getTracer('app').startActiveSpan('charge card', async (span) => {
      this.seen.push(event.id);
      span.end();
    });
  }
}

describe('tracing across the queue (fauxqs)', () => {
  const polling = usePollingHarness();
  const { queues } = polling;
  const topics = new TestTopics();
  let tracing: TestTracing;
  beforeEach(() => {
    tracing = startTestTracing();
  });
  afterEach(() => tracing.stop());
  afterAll(() => topics.deleteAll());

  async function consume(
    count: number,
    app: { get: (type: typeof Orders) => Orders },
  ): Promise<ReadableSpan[]> {
    await waitFor(() => app.get(Orders).seen.length >= count, `${count} record(s) handled`);
    return waitFor(() => {
      const spans = tracing.spans().filter((span) => span.name.startsWith('process '));
      return spans.length >= count ? spans : undefined;
    }, `${count} record span(s)`);
  }

  it("links the consumer's record span to the producer's send span, and parents the handler's span", async () => {
    const queue = await queues.create('traced');
    const app = await polling.startApp({ queues: [{ name: 'orders', url: queue.url }], providers: [Orders] });
    const producer = app.get(SqsProducer);
    await trace.getTracer('test').startActiveSpan('POST /orders', async (request) => {
      await producer.send('orders', created('t1'));
      request.end();
    });
    const [record] = await consume(1, app);
    const [request] = tracing.spans('POST /orders');
    const [send] = tracing.spans('send orders');

    expect(send.kind).toBe(SpanKind.PRODUCER);
    expect(parentIdOf(send)).toBe(request.spanContext().spanId);
    expect(send.attributes).toMatchObject({
      'messaging.system': 'aws_sqs',
      'messaging.operation.name': 'send',
      'messaging.operation.type': 'send',
      'messaging.destination.name': 'orders',
      'aws.sqs.queue.url': queue.url,
      'messaging.message.id': record.attributes['messaging.message.id'],
    });
    expect(record.name).toBe('process orders');
    expect(record.links.map((link) => link.context.spanId)).toEqual([send.spanContext().spanId]);
    expect(record.links[0].context.traceId).toBe(request.spanContext().traceId);
    expect(record.attributes).toMatchObject({
      'aws.sqs.queue.url': queue.url,
      'idempotent_sqs.status': 'OK',
    });
    const [charge] = tracing.spans('charge card');
    expect(parentIdOf(charge)).toBe(record.spanContext().spanId);
    expect(polling.logged.find((line) => line.includes('status=OK'))).toContain(
      `traceId=${record.spanContext().traceId}`,
    );
  });

  it("gives each message of a batch a create span, linked from the send span and by the message's record span", async () => {
    const queue = await queues.create('traced-batch');
    const app = await polling.startApp({ queues: [{ name: 'orders', url: queue.url }], providers: [Orders] });
    await app.get(SqsProducer).sendBatch('orders', [created('b1'), created('b2'), created('b3')]);
    const records = await consume(3, app);
    const creates = tracing.spans('create orders');
    const [send] = tracing.spans('send orders');
    expect(creates).toHaveLength(3);
    expect(creates.every((span) => span.kind === SpanKind.PRODUCER)).toBe(true);
    expect(send.kind).toBe(SpanKind.CLIENT);
    expect(send.attributes['messaging.batch.message_count']).toBe(3);
    const createIds = creates.map((span) => span.spanContext().spanId).sort();
    expect(send.links.map((link) => link.context.spanId).sort()).toEqual(createIds);
    expect(records.map((record) => record.links[0]?.context.spanId).sort()).toEqual(createIds);
  });

  it('keeps a context the app put on the message, and sends one with no room left without it', async () => {
    const queue = await queues.create('traced-own');
    const app = await polling.startApp({ queues: [{ name: 'orders', url: queue.url }], providers: [Orders] });
    const own = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const producer = app.get(SqsProducer);
    await producer.send('orders', created('o1'), { messageAttributes: { traceparent: own } });
    const full = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`a${i}`, `v${i}`]));
    await producer.send('orders', created('o2'), { messageAttributes: full });
    const records = await consume(2, app);
    const byKey = (id: string) =>
      records.find((record) => record.attributes['idempotent_sqs.key_hash'] === keyHash(id))!;
    expect(byKey('o1').links.map((link) => link.context.spanId)).toEqual(['b7ad6b7169203331']);
    expect(byKey('o2').links).toEqual([]);
    const skipped = tracing
      .spans('send orders')
      .find((span) => span.attributes['idempotent_sqs.context_skipped']);
    expect(skipped?.attributes['idempotent_sqs.context_skipped']).toBe(1);
    expect(polling.logged.join('\n')).toContain('without their trace context');
  });

  it('gives SqsServer (the microservice transport) the same record span, linked to the sender', async () => {
    const queue = await queues.create('traced-server');
    await polling.start(startFulfilmentService({ queues: [{ name: 'orders', url: queue.url }] }));
    const sender = trace.getTracer('test').startSpan('send by hand', { kind: SpanKind.PRODUCER });
    const carrier: Record<string, string> = {};
    propagation.inject(trace.setSpan(context.active(), sender), carrier);
    sender.end();
    await queues.client.send(
      new SendMessageCommand({
        QueueUrl: queue.url,
        MessageBody: JSON.stringify(orderPlaced('srv')),
        MessageAttributes: { traceparent: { DataType: 'String', StringValue: carrier.traceparent } },
      }),
    );
    const [record] = await waitFor(() => {
      const spans = tracing.spans('process orders');
      return spans.length > 0 ? spans : undefined;
    }, 'the record span');
    expect(record.kind).toBe(SpanKind.CONSUMER);
    expect(record.links.map((link) => link.context.spanId)).toEqual([sender.spanContext().spanId]);
    expect(record.attributes).toMatchObject({
      'aws.sqs.queue.url': queue.url,
      'idempotent_sqs.status': 'OK',
      'idempotent_sqs.claim': 'ACQUIRED',
      'idempotent_sqs.event_type': 'order_placed',
      // Nest names every handler function alike: the span names the pattern.
      'idempotent_sqs.handler': "@EventPattern('order_placed')",
    });
  });

  it("links a record that came in an SNS notification to its publisher's span", async () => {
    const queue = await queues.create('traced-sns');
    const topic = await topics.create('traced');
    await topics.subscribe(topic, queue.url, { raw: false });
    const app = await polling.startApp({
      queues: [{ name: 'orders', url: queue.url, envelope: 'sns' }],
      producer: { snsClient: fauxqsClientConfig() },
      providers: [Orders],
    });
    await app.get(SqsProducer).publish(topic, created('s1'));
    const [record] = await consume(1, app);
    const [publish] = tracing.spans().filter((span) => span.name.startsWith('send traced'));
    expect(publish.attributes['messaging.system']).toBe('aws_sns');
    expect(record.links.map((link) => link.context.spanId)).toEqual([publish.spanContext().spanId]);
  });
});

/** The hash the record span shows for a key (`idempotent_sqs.key_hash`). */
function keyHash(key: string): string {
  return 'h:' + createHash('sha256').update(key).digest('hex').slice(0, 16);
}
