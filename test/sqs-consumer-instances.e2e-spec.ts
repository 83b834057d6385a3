import type { TestingModule } from '@nestjs/testing';
import { AcquireResult } from '../lib/stores';
import { InMemoryIdempotencyStore } from '../lib';
import { orderCreated, ShippingLog, shipmentsPerOrder, startShippingApp } from './fixtures/shipping.fixture';
import { RecordingStore } from './support/recording-store';
import { waitFor } from './support/sqs-queues';
import { usePollingHarness } from './support/polling-harness';

describe('SqsModule polling fauxqs: several instances', () => {
  const polling = usePollingHarness();
  const { queues } = polling;

  it('two apps consuming one queue with one shared store never run a handler twice for one key', async () => {
    const queue = await queues.create('instances', { visibilityTimeout: 1 });
    // One store shared by both apps, seen through a recorder per app: which app claimed which key.
    const shared = new InMemoryIdempotencyStore();
    const stores = [new RecordingStore(shared), new RecordingStore(shared)];
    const options = { queues: [{ name: 'orders', url: queue.url }], batchSize: 5, visibilityTimeout: 1 };
    const apps: TestingModule[] = [];
    for (const store of stores) apps.push(await polling.start(startShippingApp({ ...options, store })));
    const logs = apps.map((app) => app.get(ShippingLog));
    // Every handler call waits at this gate, so the first copies stay in flight until the other
    // instance has met one of them: the dedup under test is the one across instances.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    for (let n = 0; n < 20; n++) logs.forEach((log) => log.holds.set(`order-${n}`, gate));

    // Each order three times, the copies side by side (a producer's retry and a copy sent at once),
    // so that a batch of five ends amid one order's copies and the other instance receives the rest.
    const copies = Array.from({ length: 20 }, (_, n) => orderCreated(String(n))).flatMap((body) => [
      body,
      body,
      body,
    ]);
    for (let i = 0; i < copies.length; i += 10) await queues.sendBatch(queue.url, copies.slice(i, i + 10));

    const claimedBy = (instance: number, answer: AcquireResult) =>
      new Set(stores[instance].calls.filter((call) => call.answer === answer).map((call) => call.key));
    const metAcross = (): string[] =>
      [0, 1].flatMap((instance) => {
        const held = claimedBy(1 - instance, AcquireResult.ACQUIRED);
        return [...claimedBy(instance, AcquireResult.IN_PROGRESS)].filter((key) => held.has(key));
      });
    await waitFor(
      () => logs.every((log) => log.calls.length > 0) && metAcross().length > 0,
      'both instances to hold a handler in flight, and one to meet a copy the other holds (IN_PROGRESS)',
    );
    expect(logs.map((log) => log.shipped.length)).toEqual([0, 0]); // nothing passed the gate yet
    open();

    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'every copy to be acked', 30_000);
    const shipments = shipmentsPerOrder(logs);
    expect([...shipments.values()]).toEqual(Array(20).fill(1));
    expect(shipments.size).toBe(20);
    // Both instances did work, so the dedup held across them rather than inside one.
    expect(logs.map((log) => log.shipped.length > 0)).toEqual([true, true]);
  });
});
