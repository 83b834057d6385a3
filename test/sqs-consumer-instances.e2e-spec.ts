import type { TestingModule } from '@nestjs/testing';
import { InMemoryIdempotencyStore } from '../lib';
import { orderCreated, ShippingLog, shipmentsPerOrder, startShippingApp } from './fixtures/shipping.fixture';
import { TestQueues, waitFor } from './support/sqs-queues';
import { captureLogs } from './support/captured-logs';

describe('SqsModule polling fauxqs: several instances', () => {
  const queues = new TestQueues();
  const apps: TestingModule[] = [];

  beforeEach(() => void captureLogs());

  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    jest.restoreAllMocks();
  });

  afterAll(() => queues.deleteAll());

  it('two apps consuming one queue with one shared store never run a handler twice for one key', async () => {
    const queue = await queues.create('instances', { visibilityTimeout: 1 });
    const store = new InMemoryIdempotencyStore();
    for (let i = 0; i < 2; i++) {
      apps.push(
        await startShippingApp({
          queues: [{ name: 'orders', url: queue.url }],
          batchSize: 5,
          visibilityTimeout: 1,
          store,
        }),
      );
    }
    const logs = apps.map((app) => app.get(ShippingLog));
    // Slow handlers, so that both instances are busy at once and copies meet in flight.
    const slow = new Promise<void>((resolve) => setTimeout(resolve, 40));
    for (let n = 0; n < 20; n++) logs.forEach((log) => log.holds.set(`order-${n}`, slow));

    // Each order three times: a retry by the producer, and a copy sent at once next to it.
    const bodies = Array.from({ length: 20 }, (_, n) => orderCreated(String(n)));
    const copies = [...bodies, ...bodies, ...bodies];
    for (let i = 0; i < copies.length; i += 10) await queues.sendBatch(queue.url, copies.slice(i, i + 10));

    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'every copy to be acked', 20_000);
    const shipments = shipmentsPerOrder(logs);
    expect([...shipments.values()]).toEqual(Array(20).fill(1));
    expect(shipments.size).toBe(20);
    // Both instances did work, so the dedup held across them rather than inside one.
    expect(logs.map((log) => log.calls.length > 0)).toEqual([true, true]);
  });
});
