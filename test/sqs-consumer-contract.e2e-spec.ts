import { deferred } from './fixtures/orders.fixture';
import { orderCreated, ShippingLog, startShippingApp } from './fixtures/shipping.fixture';
import { TestQueue, waitFor } from './support/sqs-queues';
import { usePollingHarness } from './support/polling-harness';

/**
 * The idempotency contract on a real SQS (fauxqs), through the polling host: what SQS does with
 * each kind of duplicate and failure, and what the handler sees.
 */
describe('SqsModule polling fauxqs: the contract', () => {
  const polling = usePollingHarness();
  const { queues } = polling;
  let log: ShippingLog;
  let queue: TestQueue;

  async function start(options: { maxReceiveCount?: number } = {}): Promise<void> {
    queue = await queues.create('contract', { visibilityTimeout: 1, ...options });
    const app = await polling.start(
      startShippingApp({ queues: [{ name: 'orders', url: queue.url }], visibilityTimeout: 1 }),
    );
    log = app.get(ShippingLog);
  }

  /** The record log lines of one message, in order. */
  const recordLines = (messageId: string) =>
    polling.logged.filter((line) => line.startsWith('status=') && line.includes(`messageId=${messageId} `));

  it('handles a message once and deletes it', async () => {
    await start();
    await queues.send(queue.url, orderCreated('e1'));
    await waitFor(() => log.shipped.length === 1, 'the order to ship');
    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'the message to be deleted');
    expect(log.shipped[0]).toMatchObject({ eventId: 'e1', receiveCount: 1, queue: 'orders' });
    // The handler can reach the SDK message itself.
    expect(log.shipped[0].raw).toMatchObject({
      MessageId: log.shipped[0].messageId,
      ReceiptHandle: expect.any(String),
    });
  });

  it('deletes a duplicate delivered after completion without running the handler', async () => {
    await start();
    await queues.send(queue.url, orderCreated('e1'));
    await waitFor(
      async () => (await queues.depth(queue.url)) === 0 && log.shipped.length === 1,
      'the first copy',
    );
    await queues.send(queue.url, orderCreated('e1'));
    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'the duplicate to be deleted');
    expect(log.calls).toHaveLength(1);
  });

  it('runs a producer retry (same payload id, new message id) once', async () => {
    await start();
    const first = await queues.send(queue.url, orderCreated('e1'));
    const retry = await queues.send(queue.url, orderCreated('e1'));
    expect(retry).not.toBe(first);
    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'both copies to be deleted');
    expect(log.shipments('order-e1')).toBe(1);
    expect(log.calls).toHaveLength(1);
  });

  it('leaves an in-flight duplicate on the queue; it comes back after the visibility timeout and is acked as a duplicate', async () => {
    await start();
    const hold = deferred();
    log.holds.set('order-e1', hold.promise);
    const [original, duplicate] = await queues.sendBatch(queue.url, [orderCreated('e1'), orderCreated('e1')]);
    await waitFor(() => log.calls.length === 1, 'the first copy to be in flight');
    // The copy that lost the claim fails on purpose and stays: not deleted while the first runs.
    await waitFor(
      async () => (await queues.peek(queue.url)).length === 0,
      'the in-flight duplicate to be hidden',
    );
    expect(await queues.depth(queue.url)).toBe(2);
    hold.resolve();
    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'both copies to be deleted', 30_000);
    expect(log.shipments('order-e1')).toBe(1);
    expect(log.calls).toHaveLength(1);
    const first = log.calls[0].messageId;
    const second = first === original ? duplicate : original;
    expect(recordLines(first).map(statusAndCount)).toEqual(['OK 1']);
    expect(recordLines(second).map(statusAndCount)).toEqual(['IN_PROGRESS 1', 'DUPLICATE 2']);
  });

  it('keeps a slow batch hidden with heartbeatInterval, so it is not redelivered while it runs', async () => {
    queue = await queues.create('heartbeat', { visibilityTimeout: 1 });
    const app = await polling.start(
      startShippingApp({
        queues: [{ name: 'orders', url: queue.url, visibilityTimeout: 1, heartbeatInterval: 0.4 }],
      }),
    );
    log = app.get(ShippingLog);
    const hold = deferred();
    log.holds.set('order-e1', hold.promise);
    await queues.send(queue.url, orderCreated('e1'));
    await waitFor(() => log.calls.length === 1, 'the handler to be in flight');
    // Three visibility timeouts later the message is still hidden: nobody else could receive it.
    // (A peek that found it would hide it again, so count what every peek saw.)
    const until = Date.now() + 3_000;
    let seen = 0;
    try {
      await waitFor(async () => {
        seen += (await queues.peek(queue.url)).length;
        return seen > 0 || Date.now() > until;
      }, 'three visibility timeouts');
    } finally {
      hold.resolve();
    }
    expect(seen).toBe(0);
    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'the message to be deleted');
    expect(log.shipped.map((delivery) => delivery.receiveCount)).toEqual([1]);
  });

  it('leaves a message whose handler throws; it is redelivered with receive count 2 and then succeeds', async () => {
    await start();
    log.failures.set('order-e1', 1);
    await queues.send(queue.url, orderCreated('e1'));
    await waitFor(() => log.shipped.length === 1, 'the redelivery to succeed');
    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'the message to be deleted');
    expect(log.calls.map((call) => call.receiveCount)).toEqual([1, 2]);
    expect(log.shipped[0].receiveCount).toBe(2);
  });

  it('moves a message that always throws to the dead-letter queue through its RedrivePolicy', async () => {
    await start({ maxReceiveCount: 2 });
    log.failures.set('order-e1', Infinity);
    const id = await queues.send(queue.url, orderCreated('e1'));
    const [dead] = await waitFor(
      async () => queues.peek(queue.dlqUrl!).then((m) => (m.length ? m : undefined)),
      'the DLQ',
    );
    expect(dead.MessageId).toBe(id);
    expect(log.calls.map((call) => call.receiveCount)).toEqual([1, 2]);
    expect(log.shipped).toHaveLength(0);
  });

  it('moves an invalid body to the dead-letter queue the same way, logging the reason once per receive', async () => {
    await start({ maxReceiveCount: 2 });
    const id = await queues.send(queue.url, {
      type: 'order_created',
      id: 'e1',
      orderId: 'order-e1',
      amount: 0,
    });
    await waitFor(async () => (await queues.peek(queue.dlqUrl!)).length === 1, 'the DLQ');
    const lines = polling.logged.filter((line) => line.includes(id));
    expect(lines).toHaveLength(2);
    for (const [index, line] of lines.entries()) {
      expect(line).toContain('status=INVALID');
      expect(line).toContain(`receiveCount=${index + 1}`);
      expect(line).toMatch(/amount must not be less than 1/);
    }
    expect(log.calls).toHaveLength(0);
  });
});

function statusAndCount(line: string): string {
  return `${/status=(\w+)/.exec(line)?.[1]} ${/receiveCount=(\d+)/.exec(line)?.[1]}`;
}
