import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Module } from '@nestjs/common';
import { IdempotencyModule, SqsConsumerManager, SqsModule, createSqsLambdaHandler } from '../lib';
import { buildSqsEvent, buildSqsRecord } from '../lib/testing';
import { deferred } from './fixtures/orders.fixture';
import { orderCreated, ShippingLog, ShippingModule, startShippingApp } from './fixtures/shipping.fixture';
import { fauxqsClientConfig, waitFor } from './support/sqs-queues';
import { usePollingHarness } from './support/polling-harness';

describe('SqsModule polling fauxqs: lifecycle', () => {
  const polling = usePollingHarness();
  const { queues } = polling;

  const visibleCount = async (url: string) => {
    const { Attributes = {} } = await queues.client.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    return Number(Attributes.ApproximateNumberOfMessages);
  };

  it('closing the app mid-batch lets in-flight handlers finish and ack before any provider is destroyed', async () => {
    const queue = await queues.create('shutdown', { visibilityTimeout: 10 });
    const app = await polling.start(startShippingApp({ queues: [{ name: 'orders', url: queue.url }] }));
    const log = app.get(ShippingLog);
    const manager = app.get(SqsConsumerManager);
    const hold = deferred();
    log.holds.set('order-1', hold.promise);
    log.holds.set('order-2', hold.promise);
    log.failures.set('order-3', Infinity);
    await queues.sendBatch(queue.url, [orderCreated('1'), orderCreated('2'), orderCreated('3')]);
    await waitFor(() => log.calls.length === 3, 'the batch to be in flight');

    let closed = false;
    const closing = polling.close(app).then(() => (closed = true));
    await waitFor(() => !manager.isRunning('orders'), 'the consumer to stop polling');
    // The operator is told the drain began, what it waits for and for how long at most.
    expect(polling.logged).toContain(
      'Draining queue "orders": polling stops, 3 message(s) in flight awaited for at most 25000 ms (shutdownTimeoutMs).',
    );
    // The app waits for the batch; the handlers' providers are still there.
    expect(closed).toBe(false);
    expect(log.destroyed).toBe(false);

    hold.resolve();
    await closing;
    expect(log.destroyed).toBe(true);
    expect(log.shipped.map((delivery) => delivery.orderId).sort()).toEqual(['order-1', 'order-2']);
    // The two that finished were acked; the one that failed stays (hidden until its visibility timeout).
    expect(await queues.depth(queue.url)).toBe(1);
    expect(await visibleCount(queue.url)).toBe(0);
  });

  it('does not ack a handler that outlives shutdownTimeoutMs, and says so', async () => {
    const queue = await queues.create('shutdown-timeout', { visibilityTimeout: 10 });
    const app = await polling.start(
      startShippingApp({ queues: [{ name: 'orders', url: queue.url }], shutdownTimeoutMs: 200 }),
    );
    const log = app.get(ShippingLog);
    const hold = deferred();
    log.holds.set('order-1', hold.promise);
    const id = await queues.send(queue.url, orderCreated('1'));
    await waitFor(() => log.calls.length === 1, 'the handler to be in flight');

    await polling.close(app);
    expect(polling.logged.join('\n')).toContain(`1 message(s) still in flight after 200 ms (${id})`);
    hold.resolve();
    await waitFor(() => log.settled === 1, 'the held handler to end');
    // It cannot ship any more (its providers are gone) and the message is still on the queue.
    expect(log.shipped).toHaveLength(0);
    expect(await queues.depth(queue.url)).toBe(1);
  });

  it('stops an idle consumer at once, in the middle of a 20 s long poll', async () => {
    const queue = await queues.create('idle');
    const app = await polling.start(
      startShippingApp({ queues: [{ name: 'orders', url: queue.url }], waitTimeSeconds: 20 }),
    );
    const consumer = app.get(SqsConsumerManager).getConsumer('orders')!;
    await waitFor(() => consumer.status.isPolling, 'the long poll');
    const started = Date.now();
    await polling.close(app);
    expect(polling.logged).toContain('Draining queue "orders": polling stops, nothing in flight.');
    expect(Date.now() - started).toBeLessThan(10_000); // well within the 20 s poll it must not wait out
    expect(consumer.status).toEqual({ isRunning: false, isPolling: false });
  });

  it('releases messages a receive returns while the consumer is stopping, without handling them', async () => {
    const queue = await queues.create('stop-race', { visibilityTimeout: 30 });
    const real = new SQSClient(fauxqsClientConfig());
    const host: { manager?: SqsConsumerManager } = {};
    let stopping: Promise<void> | undefined;
    // A client that starts the shutdown right when a receive comes back with messages: the race
    // between a long poll and app.close(), made deterministic.
    const client = {
      send: async (command: { constructor: { name: string } }, options?: unknown) => {
        const output = await real.send(command as never, options as never);
        const received = (output as { Messages?: unknown[] }).Messages?.length;
        if (command.constructor.name === 'ReceiveMessageCommand' && received) {
          stopping ??= host.manager?.stop();
        }
        return output;
      },
    };
    const app = await polling.start(
      startShippingApp({
        queues: [{ name: 'orders', url: queue.url }],
        client: client as unknown as SQSClient,
        autoStart: false,
      }),
    );
    const manager = app.get(SqsConsumerManager);
    host.manager = manager;
    await queues.send(queue.url, orderCreated('1'));
    manager.start();
    await waitFor(() => stopping !== undefined, 'a receive to return the message');
    await stopping;
    expect(app.get(ShippingLog).calls).toHaveLength(0);
    // Visible again at once, not after its 30 s visibility timeout.
    expect(await visibleCount(queue.url)).toBe(1);
    real.destroy();
  });

  it('with autoStart: false polls nothing until start() is called', async () => {
    const queue = await queues.create('manual');
    const app = await polling.start(
      startShippingApp({ queues: [{ name: 'orders', url: queue.url }], autoStart: false }),
    );
    const manager = app.get(SqsConsumerManager);
    await queues.send(queue.url, orderCreated('1'));
    expect(manager.queues).toEqual(['orders']);
    expect(manager.isRunning('orders')).toBe(false);
    expect(manager.getConsumer('orders')!.status.isRunning).toBe(false);
    expect(await visibleCount(queue.url)).toBe(1);

    manager.start('orders');
    const log = app.get(ShippingLog);
    await waitFor(() => log.shipped.length === 1, 'the order to ship once started');
    await manager.stop();
    expect(manager.isRunning('orders')).toBe(false);
  });

  it('never polls in a Lambda handler, even with queue URLs configured', async () => {
    const queue = await queues.create('lambda');
    @Module({
      imports: [
        IdempotencyModule.forRoot({}),
        SqsModule.forRoot({ queues: [{ name: 'orders', url: queue.url }], client: fauxqsClientConfig() }),
        ShippingModule,
      ],
    })
    class OrdersAppModule {}
    const handler = createSqsLambdaHandler(OrdersAppModule, { queue: 'orders' });
    try {
      const lambdaApp = await handler.getApp();
      const manager = lambdaApp.get(SqsConsumerManager);
      expect(manager.queues).toEqual([]);
      expect(() => manager.start()).toThrow(/Lambda handler, which never polls/);

      await queues.send(queue.url, orderCreated('1'));
      const response = await handler(buildSqsEvent([buildSqsRecord(orderCreated('2'))]));
      expect(response.batchItemFailures).toEqual([]);
      expect(lambdaApp.get(ShippingLog).shipped.map((d) => d.orderId)).toEqual(['order-2']);
      expect(await visibleCount(queue.url)).toBe(1);
    } finally {
      await handler.close();
    }
  });
});
