import { buildSqsRecord, SqsTestClient } from '../lib/testing';
import { deferred, OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { createTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

// The races across processes and connections, at scale on Redis, DynamoDB and Postgres, are in
// claim-race-processes.long-spec.ts (`npm run test:long`).
describe('claim race in one process: the in-memory store behind the Lambda host', () => {
  it('runs the handler once per event among 1,000 concurrent duplicates (50 events x 20 copies)', async () => {
    const app = await createTestApp({
      sqs: { concurrency: 1_000, recordLog: false },
      imports: [OrdersModule],
    });
    try {
      const ledger = app.get(OrdersLedger);
      const hold = deferred();
      const events = Array.from({ length: 50 }, (_, n) => orderCreated(`dup-${n}`));
      for (const event of events) ledger.script.set(event.orderId, hold.promise);
      // Copy c of event n at position c * 50 + n: every event's copies spread over the batch.
      const records = Array.from({ length: 1_000 }, (_, i) => buildSqsRecord(events[i % 50]));

      const first = app.sqs.sendRecords(records);
      // Every first copy is inside its handler, holding its claim, while the other 950 claim.
      await waitFor(() => ledger.calls === 50, 30_000, 'the 50 first copies in their handlers');
      hold.resolve();
      const { statuses } = await first;
      expect(statuses.filter((status) => status === 'OK')).toHaveLength(50);
      expect(statuses.filter((status) => status === 'IN_PROGRESS')).toHaveLength(950);

      // The 950 in-flight duplicates come back (SQS redelivers them): each is acked as a duplicate.
      const failed = records.filter((_, i) => statuses[i] === 'IN_PROGRESS');
      const again = await app.sqs.sendRecords(failed.map(SqsTestClient.redelivery));
      expect(new Set(again.statuses)).toEqual(new Set(['DUPLICATE']));
      expect(ledger.calls).toBe(50);
      expect(events.every((event) => ledger.count(event.orderId) === 1)).toBe(true);
    } finally {
      await app.close();
    }
  });
});
