import { IdempotencyStats } from '../lib/center';
import type { SqsRecordLike } from '../lib';
import { buildSqsRecord } from '../lib/testing';
import { OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { createTestApp, TestApp } from './support/test-app';

/**
 * A record's receive count is derived once, the same way on every path: the records a handler ran
 * and the records the batch rules failed unrun (behind a FIFO failure) show the same count in their
 * log line and in the Center's journal. An `ApproximateReceiveCount` that is missing, not a number,
 * or below 1 reads as 1 (the first delivery), as `ctx.receiveCount` reads it.
 */

/** A FIFO record of group g1 whose `ApproximateReceiveCount` is `count` (deleted when `undefined`). */
function fifoRecord(id: string, orderId: string, count: string | undefined): SqsRecordLike {
  const record = buildSqsRecord(orderCreated(id, orderId), { queue: 'orders.fifo', groupId: 'g1' });
  if (count === undefined)
    delete (record.attributes as Partial<typeof record.attributes>).ApproximateReceiveCount;
  else record.attributes.ApproximateReceiveCount = count;
  return record;
}

describe('the receive count of a record', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await createTestApp({ idempotency: { stats: {} }, imports: [OrdersModule] });
  });
  afterEach(() => app.close());

  it.each([
    ['missing', undefined, 1],
    ['"0"', '0', 1],
    ['negative', '-2', 1],
    ['not a number', 'many', 1],
    ['"3"', '3', 3],
  ])(
    'is the same for a record that ran and one failed unrun behind it, when the attribute is %s',
    async (_, count, expected) => {
      app.get(OrdersLedger).script.set('o-fail', 'fail');
      const ran = fifoRecord('rc-1', 'o-fail', count);
      const blocked = fifoRecord('rc-2', 'o-next', count);

      const { statuses } = await app.sqs.sendRecords([ran, blocked]);

      expect(statuses).toEqual(['FAILED', 'FAILED']);
      expect(app.get(OrdersLedger).calls).toBe(1); // the second was not attempted
      const lines = app.logs.lines.filter((line) => line.context === 'SqsRecord').map((line) => line.message);
      expect(lines).toHaveLength(2);
      for (const record of [ran, blocked]) {
        expect(lines.find((line) => line.includes(`messageId=${record.messageId} `))).toContain(
          ` receiveCount=${expected} `,
        );
      }
      const { records } = await app.get(IdempotencyStats).activity();
      const journaled = new Map(records.map((entry) => [entry.messageId, entry.receiveCount]));
      expect(journaled.get(ran.messageId)).toBe(expected);
      expect(journaled.get(blocked.messageId)).toBe(expected);
    },
  );
});
