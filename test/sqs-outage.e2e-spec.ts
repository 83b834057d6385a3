import { deferred } from './fixtures/orders.fixture';
import { orderCreated, ShippingLog, startShippingApp } from './fixtures/shipping.fixture';
import { fauxqsClientConfig, waitFor } from './support/sqs-queues';
import { TcpFaultProxy } from './support/tcp-fault-proxy';
import { announcedDelayMs } from './support/receive-delay';
import { usePollingHarness } from './support/polling-harness';

/**
 * The SQS endpoint goes away, then comes back slow: a TCP proxy between the polling app and fauxqs
 * refuses connections for a few seconds, then delays every packet. The consumer logs, backs off and
 * resumes; every event is handled exactly once (a delete lost in the outage only brings back a
 * duplicate, acked without running the handler) and the queue drains.
 */
describe('SqsModule polling through an SQS outage and a slow network', () => {
  const polling = usePollingHarness();
  const { queues } = polling;
  let proxy: TcpFaultProxy;

  beforeEach(async () => {
    // Closed after the test's app (the harness closes latest first).
    proxy = await polling.start(TcpFaultProxy.start(fauxqsClientConfig().endpoint as string));
  });

  it('logs, backs off, resumes, and handles every event exactly once', async () => {
    const queue = await queues.create('outage', { visibilityTimeout: 2 });
    const app = await polling.start(
      startShippingApp({
        queues: [{ name: 'orders', url: queue.url }],
        client: { ...fauxqsClientConfig(), endpoint: proxy.url, maxAttempts: 1 },
      }),
    );
    const log = app.get(ShippingLog);
    const ids = (from: number, count: number) => Array.from({ length: count }, (_, n) => String(from + n));
    const sendOrders = async (orderIds: string[]) => {
      for (let i = 0; i < orderIds.length; i += 10) {
        await queues.sendBatch(
          queue.url,
          orderIds.slice(i, i + 10).map((id) => orderCreated(id)),
        );
      }
    };

    await sendOrders(ids(0, 20));
    await waitFor(() => log.shipped.length === 20, 'the first 20 orders');

    // One order is in its handler when SQS goes away: its ack (the delete) will fail.
    const release = deferred();
    log.holds.set('order-held', release.promise);
    const heldMessageId = await queues.send(queue.url, orderCreated('held'));
    await waitFor(
      () => log.calls.some((call) => call.orderId === 'order-held'),
      'the held order in its handler',
    );

    // Down: new connections refused, open ones (a long poll, a delete) cut.
    await proxy.down();
    release.resolve();
    await sendOrders(ids(20, 20)); // straight to fauxqs: the producer is not behind the proxy
    const failures = () => polling.logged.filter((line) => line.includes('receive failed'));
    await waitFor(() => failures().length >= 3, 'three failed receives', 30_000);
    const pauses = failures().map(announcedDelayMs);
    expect(pauses[1]).toBeGreaterThan(pauses[0]);
    expect(pauses[2]).toBeGreaterThan(pauses[1]);
    expect(log.shipped).toHaveLength(21); // the held order finished; nothing was received while down
    expect(
      polling.logged.some((line) => /Queue "orders": .*Messages not deleted are redelivered/.test(line)),
    ).toBe(true);

    // Back, but slow: every chunk of every request and response 150 ms late.
    proxy.latency(150);
    await proxy.up();
    await sendOrders(ids(40, 20));
    await waitFor(() => log.shipped.length >= 61, 'all 61 orders through the slow network', 30_000);
    await waitFor(
      async () => (await queues.depth(queue.url)) === 0 && (await queues.depth(queue.url)) === 0,
      'the queue to drain',
      30_000,
      250,
    );
    expect(polling.logged.some((line) => /receiving again after \d+ failed receive/.test(line))).toBe(true);
    // Exactly once: 61 orders, each shipped once. The held order's delete was lost in the outage,
    // so SQS delivered it again: the copy was acked as a duplicate, its handler not run again.
    const perOrder = new Map<string, number>();
    for (const { orderId } of log.shipped) perOrder.set(orderId, (perOrder.get(orderId) ?? 0) + 1);
    expect(perOrder.size).toBe(61);
    expect([...perOrder.values()].filter((count) => count !== 1)).toEqual([]);
    expect(log.calls.filter((call) => call.orderId === 'order-held')).toHaveLength(1);
    expect(
      polling.logged.filter((line) => line.startsWith('status=DUPLICATE') && line.includes(heldMessageId)),
    ).not.toEqual([]);
  }, 90_000);
});
