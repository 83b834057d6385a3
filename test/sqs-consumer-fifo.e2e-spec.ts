import { SqsConsumerManager } from '../lib';
import { orderCreated, ShippingLog, startShippingApp } from './fixtures/shipping.fixture';
import { waitFor } from './support/sqs-queues';
import { usePollingHarness } from './support/polling-harness';

describe('SqsModule polling fauxqs: FIFO queues', () => {
  const polling = usePollingHarness();
  const { queues } = polling;

  it('keeps the order of each group across a failure and its redelivery', async () => {
    const queue = await queues.create('fifo', { fifo: true, visibilityTimeout: 1 });
    // Every message is on the queue before polling starts, so both groups are in the first receive:
    // sent while the app polls, on a loaded machine the last of group b could arrive after a2's
    // one-second redelivery and say nothing about one group holding up the other.
    for (const [group, ids] of [
      ['g-a', ['a1', 'a2', 'a3', 'a4']],
      ['g-b', ['b1', 'b2', 'b3']],
    ] as const) {
      for (const id of ids) await queues.send(queue.url, orderCreated(id, id), { groupId: group });
    }
    const app = await polling.start(
      startShippingApp({
        queues: [{ name: 'orders', url: queue.url }],
        visibilityTimeout: 1,
        autoStart: false,
      }),
    );
    const log = app.get(ShippingLog);
    log.failures.set('a2', 1);
    app.get(SqsConsumerManager).start();

    await waitFor(() => log.shipped.length === 7, 'every order to ship', 30_000);
    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'the queue to drain');

    const shippedOf = (group: string) => log.shipped.filter((d) => d.groupId === group).map((d) => d.orderId);
    expect(shippedOf('g-a')).toEqual(['a1', 'a2', 'a3', 'a4']);
    expect(shippedOf('g-b')).toEqual(['b1', 'b2', 'b3']);
    // a2 failed, stayed, and came back second time round before anything after it ran.
    const attemptsOfA = log.calls
      .filter((d) => d.groupId === 'g-a')
      .map((d) => `${d.orderId}#${d.receiveCount}`);
    expect(attemptsOfA).toEqual(['a1#1', 'a2#1', 'a2#2', 'a3#1', 'a4#1']);
    // The other group was not held up by a's failure: it finished while a2 waited for its redelivery.
    const b3 = log.shipped.findIndex((d) => d.orderId === 'b3');
    const a2 = log.shipped.findIndex((d) => d.orderId === 'a2');
    expect(b3).toBeLessThan(a2);
  });
});
