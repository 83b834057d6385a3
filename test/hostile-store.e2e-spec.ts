import { AcquireResult } from '../lib/stores';
import {
  IdempotencyModuleOptions,
  IdempotencyStore,
  IdempotencyStoreError,
  InMemoryIdempotencyStore,
} from '../lib';
import { IdempotencyStats } from '../lib/center';
import { deferred, OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { createTestApp, TestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

/**
 * Stores are often written by users, and a store that misbehaves must cost one record, never the
 * process. Each method of a real store is made hostile in one way at a time — it throws
 * synchronously, rejects, returns a plain value instead of a promise, or answers outside the
 * protocol — and a real Nest app handles a message through it: the misbehaviour is a store error
 * for that record (`onStoreError`), counted, and the app goes on. (A synchronous throw in the
 * heartbeat's timer used to be an uncaught exception, which kills Node; Jest fails the test on one.)
 */
type Method = 'tryAcquire' | 'markComplete' | 'forget' | 'extend';
type Misbehaviour = 'throws' | 'rejects' | 'returns a plain value' | 'answers off-protocol';
const MISBEHAVIOURS: Misbehaviour[] = ['throws', 'rejects', 'returns a plain value', 'answers off-protocol'];

/** An in-memory store whose `method` misbehaves as told; every other call goes through. */
class HostileStore implements IdempotencyStore {
  readonly shared = false;
  attempts = 0;
  private readonly inner = new InMemoryIdempotencyStore();

  constructor(
    private readonly method: Method,
    private readonly how: Misbehaviour,
  ) {}

  tryAcquire(key: string, ttlMs: number, token: string): Promise<AcquireResult> {
    return this.act('tryAcquire', AcquireResult.ACQUIRED, () => this.inner.tryAcquire(key, ttlMs, token));
  }
  markComplete(key: string, ttlMs: number, token: string): Promise<boolean> {
    return this.act('markComplete', true, () => this.inner.markComplete(key, ttlMs, token));
  }
  forget(key: string, token: string): Promise<boolean> {
    return this.act('forget', true, () => this.inner.forget(key, token));
  }
  extend(key: string, ttlMs: number, token: string): Promise<boolean> {
    return this.act('extend', true, () => this.inner.extend(key, ttlMs, token));
  }

  private act<T>(method: Method, plain: T, call: () => Promise<T>): Promise<T> {
    if (method !== this.method) return call();
    this.attempts++;
    switch (this.how) {
      case 'throws':
        throw new Error(`${method} exploded`);
      case 'rejects':
        return Promise.reject(new Error(`${method} is down`));
      case 'returns a plain value':
        return plain as never;
      case 'answers off-protocol':
        return Promise.resolve(method === 'tryAcquire' ? 'OK' : 'yes') as never;
    }
  }
}

describe('a hostile store', () => {
  let app: TestApp | undefined;
  const start = async (store: HostileStore, options: IdempotencyModuleOptions = {}) => {
    app = await createTestApp({ idempotency: { store, stats: {}, ...options }, imports: [OrdersModule] });
    return app;
  };
  const countersOf = async (running: TestApp) => {
    const snapshot = await running.get(IdempotencyStats).snapshot();
    return snapshot.eventTypes.find((type) => type.eventType === 'order_created')!.handlers[0].counters;
  };

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  describe.each(MISBEHAVIOURS)('that %s', (how) => {
    it('in tryAcquire: the record fails closed, the handler does not run, the error names the call', async () => {
      const running = await start(new HostileStore('tryAcquire', how));
      const { status, result } = await running.sqs.send(orderCreated('e1'));
      expect(status).toBe('FAILED');
      expect(result.error).toBeInstanceOf(IdempotencyStoreError);
      expect(result.error?.message).toMatch(/idempotency store tryAcquire\(".*order_created:e1"\) failed: /);
      // A broken store (no promise, an answer outside the protocol) is told from a down one by its cause's code.
      const broken = how === 'returns a plain value' || how === 'answers off-protocol';
      expect((result.error as IdempotencyStoreError).cause).toMatchObject(
        broken
          ? { code: 'IDEMPOTENCY_STORE_PROTOCOL' }
          : { message: 'tryAcquire ' + (how === 'throws' ? 'exploded' : 'is down') },
      );
      expect(running.get(OrdersLedger).calls).toBe(0);
      expect(await countersOf(running)).toMatchObject({ store_errors: 1, failed: 1, handled: 0 });
    });

    it("in tryAcquire, with onStoreError: 'process': the handler runs without dedup", async () => {
      const running = await start(new HostileStore('tryAcquire', how), { onStoreError: 'process' });
      expect((await running.sqs.send(orderCreated('e1'))).status).toBe('OK');
      expect(running.get(OrdersLedger).count('order-e1')).toBe(1);
      expect(await countersOf(running)).toMatchObject({ store_errors: 1, keyless: 1, handled: 1 });
    });

    it('in markComplete: the record stays handled, and the unrecorded completion is counted', async () => {
      const running = await start(new HostileStore('markComplete', how));
      expect((await running.sqs.send(orderCreated('e1'))).status).toBe('OK');
      expect(running.get(OrdersLedger).count('order-e1')).toBe(1);
      expect(await countersOf(running)).toMatchObject({ store_errors: 1, completions_lost: 1, handled: 1 });
      expect(
        running.logs.matching('error', /Store failed to mark ".*order_created:e1" completed/),
      ).toHaveLength(1);
    });

    it('in forget: the record fails with the handler’s own error, and the store error is counted', async () => {
      const running = await start(new HostileStore('forget', how));
      running.get(OrdersLedger).script.set('order-e1', 'fail');
      const { status, result } = await running.sqs.send(orderCreated('e1'));
      expect(status).toBe('FAILED');
      expect(result.error?.message).toBe('shipping order-e1 failed');
      expect(await countersOf(running)).toMatchObject({ store_errors: 1, failed: 1, completions_lost: 0 });
    });

    it('in extend (the heartbeat’s timer): the process lives, each failed beat is counted, the record completes', async () => {
      const store = new HostileStore('extend', how);
      const running = await start(store, { heartbeat: true, inProgressTtl: 300 });
      const hold = deferred();
      running.get(OrdersLedger).script.set('order-e1', hold.promise);
      const sent = running.sqs.send(orderCreated('e1'));
      await waitFor(() => store.attempts >= 3, 30_000, 'three heartbeats');
      hold.resolve();
      expect((await sent).status).toBe('OK');
      const counters = await countersOf(running);
      expect(counters.handled).toBe(1);
      expect(counters.store_errors).toBeGreaterThanOrEqual(3);
      expect(
        running.logs.matching('error', /Store failed to extend the lease on ".*order_created:e1"/).length,
      ).toBe(counters.store_errors);
    });
  });
});
