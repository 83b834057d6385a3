import type { LambdaContextLike } from '../lib/types';
import { buildSqsRecord } from '../lib/testing';
import { deferred, OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { RecordingStore } from './support/recording-store';
import { createTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

/** The recording store, noting when (wall clock) each extension was asked for. */
class TimedStore extends RecordingStore {
  readonly extensions: Array<{ at: number; ttlMs: number }> = [];
  override async extend(key: string, ttlMs: number, token: string): Promise<boolean> {
    this.extensions.push({ at: Date.now(), ttlMs });
    return super.extend(key, ttlMs, token);
  }
}

/**
 * On Lambda the attempt is killed at its deadline, so a lease past it only keeps redeliveries
 * waiting for a dead attempt. The claim's lease is capped by the time left; so must every renewal
 * of the heartbeat be, or each would push the lease a full `inProgressTtl` past the deadline.
 */
describe('the lease heartbeat on Lambda', () => {
  it('never extends the lease past the invocation’s deadline, and stops renewing at it', async () => {
    const store = new TimedStore();
    const app = await createTestApp({
      idempotency: { store, heartbeat: true, inProgressTtl: 60_000 },
      imports: [OrdersModule],
    });
    try {
      const deadline = Date.now() + 1_500;
      const context: LambdaContextLike = {
        awsRequestId: 'req-1',
        getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
      };
      const hold = deferred();
      app.get(OrdersLedger).script.set('order-e1', hold.promise);
      const sent = app.sqs.sendRecords([buildSqsRecord(orderCreated('e1'))], context);
      // The claim's lease is the time left (about 1.5 s): the heartbeat beats every third of it.
      await waitFor(() => store.extensions.length >= 2, 30_000, 'two renewals');
      await waitFor(() => Date.now() > deadline + 400, 30_000, 'the deadline to pass (and a beat after it)');
      const renewals = store.extensions.length;
      hold.resolve();
      await sent;

      const [claim] = store.calls.filter((call) => call.method === 'tryAcquire');
      expect(claim.ttlMs).toBeLessThanOrEqual(1_500);
      for (const { at, ttlMs } of store.extensions) expect(at + ttlMs).toBeLessThanOrEqual(deadline + 5);
      // No renewal once the deadline has passed.
      expect(store.extensions.every(({ at }) => at <= deadline)).toBe(true);
      expect(store.extensions).toHaveLength(renewals);
    } finally {
      await app.close();
    }
  });
});
