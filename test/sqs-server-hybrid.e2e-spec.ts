import { Controller, Get, Module } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload, Transport } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import type { Consumer } from 'sqs-consumer';
import { Idempotent, IdempotencyModule, SqsModule } from '../lib';
import { SqsServer } from '../lib/microservices';
import { deferred } from './fixtures/orders.fixture';
import { FulfilmentController, FulfilmentLog, orderPlaced } from './fixtures/fulfilment.fixture';
import { orderCreated, ShippingLog, ShippingModule } from './fixtures/shipping.fixture';
import { CapturingLogger } from './support/capturing-logger';
import { RecordingStore } from './support/recording-store';
import { fauxqsClientConfig, waitFor } from './support/sqs-queues';
import { usePollingHarness } from './support/polling-harness';

/**
 * SqsServer in a hybrid app (an HTTP app with `connectMicroservice`), beside SqsModule: types an
 * @EventPattern() handles go to it, the others to the @SqsMessageHandler() handlers of the app,
 * with one idempotency store and one ack rule.
 */

@Controller()
class HealthController {
  @Get('health')
  health() {
    return { ok: true };
  }
}

const audit: string[] = [];

/** Two more handlers of the fulfilment pattern: each makes its own claim, in order, and a failure stops the rest. */
@Controller()
class AuditController {
  @EventPattern('order_placed')
  @Idempotent({ scope: 'order_placed.audit' })
  async onOrderPlaced(@Payload() event: { orderId: string }) {
    if (event.orderId === 'order-audit-fails') throw new Error('the audit log is down');
    audit.push(event.orderId);
  }

  // Not @Idempotent(): Nest's exception filter hides its error from the transport.
  @EventPattern('order_voided')
  onOrderVoided() {
    throw new Error('voiding is not supported');
  }

  // Bound to another transport: SqsServer never serves it.
  @EventPattern('order_archived', Transport.REDIS)
  onOrderArchived() {}

  @MessagePattern('order_status')
  status() {
    return 'shipped';
  }
}

describe('SqsServer in a hybrid app with SqsModule', () => {
  const polling = usePollingHarness({ captureLogs: false });
  const { queues } = polling;

  afterEach(() => {
    audit.length = 0;
  });

  async function startHybrid(queueUrl: string, controllers: Array<new (...args: never[]) => unknown> = []) {
    const store = new RecordingStore();
    const logs = new CapturingLogger();
    @Module({
      imports: [IdempotencyModule.forRoot({ store }), SqsModule.forRoot({}), ShippingModule],
      controllers: [HealthController, FulfilmentController, ...controllers],
      providers: [FulfilmentLog],
    })
    class HybridModule {}
    const moduleRef = await Test.createTestingModule({ imports: [HybridModule] })
      .setLogger(logs)
      .compile();
    const created = moduleRef.createNestApplication({ logger: logs });
    await polling.start(created);
    const server = new SqsServer({
      queues: [{ name: 'orders', url: queueUrl }],
      client: fauxqsClientConfig(),
      waitTimeSeconds: 1,
    });
    created.connectMicroservice({ strategy: server });
    // Nest's documented order: microservices start before the HTTP app initialises.
    await created.startAllMicroservices();
    await created.listen(0, '127.0.0.1');
    return { app: created, server, store, logs };
  }

  it('serves @EventPattern() and @SqsMessageHandler() types of one queue, and HTTP, in one app', async () => {
    const queue = await queues.create('hybrid');
    const { app: hybrid, store, logs } = await startHybrid(queue.url);
    const { port } = hybrid.getHttpServer().address() as AddressInfo;
    await expect(fetch(`http://127.0.0.1:${port}/health`).then((res) => res.json())).resolves.toEqual({
      ok: true,
    });

    await queues.sendBatch(queue.url, [
      orderPlaced('p1'),
      orderCreated('c1'),
      orderCreated('c1'), // a copy: the SqsModule handler's @Idempotent() applies it once
      { ...orderCreated('c2'), amount: 0 }, // fails OrderCreated's validation
    ]);
    const fulfilment = hybrid.get(FulfilmentLog);
    const shipping = hybrid.get(ShippingLog);
    await waitFor(
      () => fulfilment.fulfilled.length === 1 && shipping.shipped.length === 1,
      'both kinds of handler',
    );
    await waitFor(
      () => logs.lines.some((line) => line.message.includes('status=INVALID')),
      'the invalid record',
    );
    await waitFor(
      () => logs.lines.filter((line) => /status=(DUPLICATE|IN_PROGRESS)/.test(line.message)).length >= 1,
      'the copy to meet the claim',
    );

    expect(fulfilment.fulfilled[0]).toMatchObject({
      orderId: 'order-p1',
      queue: 'orders',
      eventType: 'order_placed',
    });
    // The @SqsMessageHandler() got an SqsContext for the same queue, and the SDK message as raw.
    expect(shipping.shipped[0]).toMatchObject({ orderId: 'order-c1', queue: 'orders' });
    expect(shipping.shipped[0].raw).toHaveProperty('ReceiptHandle');
    const invalid = logs.lines.find((line) => line.message.includes('status=INVALID'))!.message;
    expect(invalid).toContain('OrderCreated fails validation: amount must not be less than 1');
    expect(store.calls.filter((call) => call.key.endsWith(':c2'))).toHaveLength(0);
    expect(
      store.calls
        .filter((call) => call.method === 'tryAcquire')
        .map((call) => call.key.replace(/:[^:]+$/, '')),
    ).toEqual(expect.arrayContaining(['idempotency:order_placed', 'idempotency:order_created']));
  });

  it('runs the handlers of one pattern in order, each with its own claim; a failure stops the rest, and says why', async () => {
    const queue = await queues.create('hybrid-chain', { visibilityTimeout: 10 });
    const { app: hybrid, store, logs } = await startHybrid(queue.url, [AuditController]);
    const fulfilment = hybrid.get(FulfilmentLog);
    await queues.send(queue.url, orderPlaced('a1'));
    await waitFor(() => audit.length === 1, 'both handlers');
    expect(fulfilment.fulfilled.map((entry) => entry.orderId)).toEqual(['order-a1']);
    expect(store.calls.filter((call) => call.method === 'tryAcquire').map((call) => call.key)).toEqual([
      'idempotency:order_placed:a1',
      'idempotency:order_placed.audit:a1',
    ]);

    const failure = async (id: string) => {
      const line = await waitFor(
        () =>
          logs.lines.find(
            (entry) => entry.message.includes('status=FAILED') && entry.message.includes(`messageId=${id}`),
          ),
        `the failure of ${id}`,
      );
      return line.message;
    };
    // The first handler fails: the second does not run, the record fails and stays on the queue.
    fulfilment.failures.set('order-a3', 1);
    expect(await failure(await queues.send(queue.url, orderPlaced('a3')))).toContain(
      'reason="the warehouse rejected order-a3"',
    );
    expect(audit).toEqual(['order-a1']);
    // The second handler fails, after the first took effect: the record fails with its cause.
    expect(await failure(await queues.send(queue.url, orderPlaced('a2', 'order-audit-fails')))).toContain(
      'reason="the audit log is down"',
    );
    expect(fulfilment.count('order-audit-fails')).toBe(1);
    expect(await queues.depth(queue.url)).toBe(2);
    // Without @Idempotent(), the transport only sees what Nest's exception filter answered.
    expect(await failure(await queues.send(queue.url, { type: 'order_voided', id: 'v1' }))).toContain(
      "the @EventPattern('order_voided') handler failed; its exception filter answered " +
        '{\\"status\\":\\"error\\",\\"message\\":\\"Internal server error\\"} (Nest logs the cause under ' +
        'RpcExceptionsHandler)',
    );

    // A handler bound to another transport is not one of this transport's.
    const archived = await queues.send(queue.url, { type: 'order_archived', id: 'x1' });
    await waitFor(
      () => logs.lines.some((line) => line.message.includes(`messageId=${archived}`)),
      'the refusal',
    );
    expect(logs.lines.find((line) => line.message.includes(`messageId=${archived}`))!.message).toMatch(
      /status=INVALID .*no handler for event type \\"order_archived\\"/,
    );

    // A request-response handler matches, but SQS has no replies.
    const status = await queues.send(queue.url, { type: 'order_status', id: 's1' });
    await waitFor(
      () => logs.lines.some((line) => line.message.includes(`messageId=${status}`)),
      'the refusal',
    );
    expect(logs.lines.find((line) => line.message.includes(`messageId=${status}`))!.message).toContain(
      'an @MessagePattern() handler matches it, but SQS has no replies: make it an @EventPattern()',
    );
  });

  it('app.close() drains the handler in flight before any provider is destroyed, then acks it', async () => {
    const queue = await queues.create('hybrid-close', { visibilityTimeout: 10 });
    const { app: hybrid, server } = await startHybrid(queue.url);
    const consumer = server.unwrap<ReadonlyMap<string, Consumer>>().get('orders')!;
    const fulfilment = hybrid.get(FulfilmentLog);
    const hold = deferred();
    fulfilment.holds.set('order-h1', hold.promise);
    await queues.send(queue.url, orderPlaced('h1'));
    await waitFor(() => fulfilment.calls.length === 1, 'the handler to be in flight');

    let closed = false;
    const closing = polling.close(hybrid).then(() => (closed = true));
    // Nest closes a hybrid app's microservices after onModuleDestroy; SqsModule drains them first.
    await waitFor(() => fulfilment.destroyed || !consumer.status.isRunning, 'the shutdown to begin');
    expect(consumer.status.isRunning).toBe(false);
    expect(closed).toBe(false);
    expect(fulfilment.destroyed).toBe(false);
    hold.resolve();
    await closing;
    expect(fulfilment.fulfilled.map((entry) => entry.orderId)).toEqual(['order-h1']);
    expect(fulfilment.destroyed).toBe(true);
    expect(await queues.depth(queue.url)).toBe(0);
  });

  it('refuses to listen when one type has both an @EventPattern() and an @SqsMessageHandler() handler', async () => {
    @Controller()
    class ClashingController {
      @EventPattern('order_created')
      onOrderCreated() {}
    }
    const queue = await queues.create('hybrid-clash');
    await expect(startHybrid(queue.url, [ClashingController])).rejects.toThrow(
      'SqsServer: event type(s) "order_created" on queue "orders" have both an @EventPattern() and an @SqsMessageHandler() handler',
    );
  });
});
