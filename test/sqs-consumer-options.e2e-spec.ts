import type { Message } from '@aws-sdk/client-sqs';
import { SqsConsumerManager } from '../lib';
import { deferred } from './fixtures/orders.fixture';
import { orderCreated, ShippingLog, startShippingApp } from './fixtures/shipping.fixture';
import { waitFor } from './support/sqs-queues';
import { usePollingHarness } from './support/polling-harness';

/**
 * sqs-consumer's terminateVisibilityTimeout and handleMessageTimeout, which it applies only outside
 * batch mode, applied per record by the polling host, on fauxqs.
 */
describe('SqsModule polling fauxqs: terminateVisibilityTimeout and handleMessageTimeout', () => {
  const polling = usePollingHarness();
  const { queues } = polling;

  it('terminateVisibilityTimeout: true brings a failed message back at once, not after its 30 s timeout', async () => {
    const queue = await queues.create('terminate', { visibilityTimeout: 30 });
    const app = await polling.start(
      startShippingApp({
        queues: [{ name: 'orders', url: queue.url, terminateVisibilityTimeout: true }],
      }),
    );
    const log = app.get(ShippingLog);
    log.failures.set('order-e1', 1);
    await queues.send(queue.url, orderCreated('e1'));
    // Well inside the queue's 30 s visibility timeout.
    await waitFor(() => log.shipped.length === 1, 'the second delivery to ship', 30_000);
    expect(log.calls.map((call) => call.receiveCount)).toEqual([1, 2]);
    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'the message to be deleted');
  });

  it('a function of the message gives a backoff by receive count', async () => {
    const queue = await queues.create('backoff', { visibilityTimeout: 30 });
    const asked: number[] = [];
    const backoff = (message: { Attributes?: Partial<Record<string, string>> }) => {
      const receives = Number(message.Attributes?.ApproximateReceiveCount);
      asked.push(receives);
      return receives < 3 ? 0 : 600;
    };
    const app = await polling.start(
      startShippingApp({
        queues: [{ name: 'orders', url: queue.url, terminateVisibilityTimeout: backoff }],
      }),
    );
    const log = app.get(ShippingLog);
    log.failures.set('order-e1', Infinity);
    await queues.send(queue.url, orderCreated('e1'));
    await waitFor(() => asked.length === 3, 'three failed deliveries', 30_000);
    expect(log.calls.map((call) => call.receiveCount)).toEqual([1, 2, 3]);
    expect(asked).toEqual([1, 2, 3]);
    // The third failure was put away for 600 s: still on the queue, not visible.
    expect(await queues.depth(queue.url)).toBe(1);
    expect(await queues.peek(queue.url)).toEqual([]);
  });

  it('an invalid message reaches the dead-letter queue without waiting out its timeouts', async () => {
    const queue = await queues.create('terminate-dlq', { visibilityTimeout: 30, maxReceiveCount: 2 });
    await polling.start(
      startShippingApp({
        queues: [{ name: 'orders', url: queue.url, terminateVisibilityTimeout: 0 }],
      }),
    );
    await queues.send(queue.url, '{"type": order');
    await waitFor(async () => (await queues.depth(queue.dlqUrl!)) === 1, 'the message in the DLQ', 30_000);
    expect(polling.logged.filter((line) => line.startsWith('status=INVALID'))).toHaveLength(2);
  });

  it('handleMessageTimeout fails a record still running, and its claim keeps the redelivery from running it twice', async () => {
    const queue = await queues.create('timeout', { visibilityTimeout: 1 });
    const app = await polling.start(
      startShippingApp({ queues: [{ name: 'orders', url: queue.url, handleMessageTimeout: 300 }] }),
    );
    const log = app.get(ShippingLog);
    const timeouts: Array<[Error, Message]> = [];
    app
      .get(SqsConsumerManager)
      .getConsumer('orders')!
      .on('timeout_error', (error: Error, message: Message) => {
        timeouts.push([error, message]);
      });
    const hold = deferred();
    log.holds.set('order-e1', hold.promise);
    const messageId = await queues.send(queue.url, orderCreated('e1'));
    await waitFor(() => timeouts.length > 0, 'the record to time out');
    expect(timeouts[0][1].MessageId).toBe(messageId);
    expect(timeouts[0][0].message).toContain(
      `Message ${messageId} on queue "orders" was not done after 300 ms`,
    );
    // Not acked: it comes back, meets the claim of the attempt still running, and fails again.
    await waitFor(
      () => polling.logged.some((line) => line.startsWith('status=IN_PROGRESS') && line.includes(messageId)),
      'the redelivery to meet the running attempt',
    );
    hold.resolve();
    await waitFor(
      async () => (await queues.depth(queue.url)) === 0,
      'the message to be acked as a duplicate',
    );
    expect(log.shipments('order-e1')).toBe(1);
    expect(log.calls).toHaveLength(1);
  });

  it('refuses unusable values at bootstrap', async () => {
    const queue = await queues.create('bad-options');
    await expect(
      startShippingApp({ queues: [{ name: 'orders', url: queue.url, terminateVisibilityTimeout: 50_000 }] }),
    ).rejects.toThrow('terminateVisibilityTimeout must be true, false, whole seconds from 0 to 43200');
    await expect(
      startShippingApp({ queues: [{ name: 'orders', url: queue.url, handleMessageTimeout: 0 }] }),
    ).rejects.toThrow('handleMessageTimeout must be a positive number of milliseconds');
  });
});
