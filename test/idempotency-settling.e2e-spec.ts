import { AcquireResult } from '../lib/stores';
import {
  IdempotencyModuleOptions,
  IdempotencyStore,
  InMemoryIdempotencyStore,
  SkipMessageException,
} from '../lib';
import { IdempotencyStats } from '../lib/center';
import { deferred, OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { createTestApp, FakeClock, TestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

/**
 * How `IdempotencyService` settles a claim and what it tells the operator: the log lines (their
 * text and the `Idempotency` context a log filter selects on) and the counters of a lost lease, a
 * lost completion and a store that failed to claim, to settle or to renew. The store is a real
 * in-memory store whose answers to one method at a time are scripted, as a user's store might give
 * them; the app is a real Nest app.
 */
type Script = Partial<Record<'tryAcquire' | 'markComplete' | 'forget' | 'extend', 'false' | 'reject'>>;

/** An in-memory store answering `false` to, or failing, the methods `script` names. */
class ScriptedStore implements IdempotencyStore {
  readonly shared = false;
  extensions = 0;
  private readonly inner = new InMemoryIdempotencyStore();

  constructor(
    private readonly script: Script,
    withExtend = true,
  ) {
    if (!withExtend) this.extend = undefined;
  }

  tryAcquire(key: string, ttlMs: number, token: string): Promise<AcquireResult> {
    if (this.script.tryAcquire === 'reject') return Promise.reject(new Error('tryAcquire is down'));
    return this.inner.tryAcquire(key, ttlMs, token);
  }
  markComplete(key: string, ttlMs: number, token: string): Promise<boolean> {
    return this.answer('markComplete', () => this.inner.markComplete(key, ttlMs, token));
  }
  forget(key: string, token: string): Promise<boolean> {
    return this.answer('forget', () => this.inner.forget(key, token));
  }
  extend?: (key: string, ttlMs: number, token: string) => Promise<boolean> = (key, ttlMs, token) => {
    this.extensions++;
    return this.answer('extend', () => this.inner.extend(key, ttlMs, token));
  };

  private answer(method: keyof Script, call: () => Promise<boolean>): Promise<boolean> {
    if (this.script[method] === 'reject') return Promise.reject(new Error(`${method} is down`));
    if (this.script[method] === 'false') return Promise.resolve(false);
    return call();
  }
}

const HANDLER = 'OrdersHandler.onOrderCreated';
const KEY = /"[^"]*order_created:e1"/.source;

describe('settling a claim', () => {
  let app: TestApp | undefined;
  const start = async (store: IdempotencyStore, options: IdempotencyModuleOptions = {}) => {
    app = await createTestApp({ idempotency: { store, stats: {}, ...options }, imports: [OrdersModule] });
    return app;
  };
  const countersOf = async (running: TestApp) => {
    const snapshot = await running.get(IdempotencyStats).snapshot();
    return snapshot.eventTypes.find((type) => type.eventType === 'order_created')!.handlers[0].counters;
  };
  /** The service's lines at `level`, under its `Idempotency` context. */
  const lines = (running: TestApp, level: 'warn' | 'error') =>
    running.logs.lines.filter((line) => line.level === level && line.context === 'Idempotency');

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('logs nothing and counts no loss when the store records the completion', async () => {
    const running = await start(new ScriptedStore({}));
    expect((await running.sqs.send(orderCreated('e1'))).status).toBe('OK');
    expect(await countersOf(running)).toMatchObject({ handled: 1, leases_lost: 0, store_errors: 0 });
    expect(running.logs.lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([]);
  });

  it("names the handler and the key when a claim fails under onStoreError: 'process'", async () => {
    const running = await start(new ScriptedStore({ tryAcquire: 'reject' }), { onStoreError: 'process' });
    expect((await running.sqs.send(orderCreated('e1'))).status).toBe('OK');
    expect(lines(running, 'error').map((line) => line.message)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Store failed to claim ${KEY} \\(tryAcquire is down\\); running ${HANDLER} without dedup ` +
            `\\(onStoreError: 'process'\\)\\.$`,
        ),
      ),
    ]);
  });

  it('says a duplicate may run again when the completion could not be recorded', async () => {
    const running = await start(new ScriptedStore({ markComplete: 'reject' }), { inProgressTtl: 4_321 });
    expect((await running.sqs.send(orderCreated('e1'))).status).toBe('OK');
    expect(lines(running, 'error').map((line) => line.message)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Store failed to mark ${KEY} completed \\(markComplete is down\\); a duplicate arriving after the ` +
            `lease \\(4321 ms\\) may run ${HANDLER} again\\.$`,
        ),
      ),
    ]);
    expect(await countersOf(running)).toMatchObject({ store_errors: 1, completions_lost: 1, leases_lost: 0 });
  });

  it('says redeliveries meet IN_PROGRESS when a failed record’s claim could not be released', async () => {
    const running = await start(new ScriptedStore({ forget: 'reject' }));
    running.get(OrdersLedger).script.set('order-e1', 'fail');
    expect((await running.sqs.send(orderCreated('e1'))).status).toBe('FAILED');
    expect(lines(running, 'error').map((line) => line.message)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Store failed to release ${KEY} after ${HANDLER} failed \\(forget is down\\); ` +
            'redeliveries meet IN_PROGRESS until the lease expires\\.$',
        ),
      ),
    ]);
    expect(await countersOf(running)).toMatchObject({ store_errors: 1, completions_lost: 0, leases_lost: 0 });
  });

  it('counts and explains a completion the store refused (the lease expired under the handler)', async () => {
    const running = await start(new ScriptedStore({ markComplete: 'false' }), { inProgressTtl: 4_321 });
    expect((await running.sqs.send(orderCreated('e1'))).status).toBe('OK');
    expect(await countersOf(running)).toMatchObject({ handled: 1, leases_lost: 1, store_errors: 0 });
    expect(lines(running, 'warn').map((line) => line.message)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Lost the claim on ${KEY} before ${HANDLER} completed: the lease \\(inProgressTtl 4321 ms\\) expired ` +
            'and another attempt took the key, so the handler may have run twice\\. Raise inProgressTtl above ' +
            'the worst-case handler time or enable heartbeat\\.$',
        ),
      ),
    ]);
  });

  it('counts a refused completion after a skip too', async () => {
    const running = await start(new ScriptedStore({ markComplete: 'false' }));
    running.get(OrdersLedger).script.set('order-e1', 'skip');
    expect((await running.sqs.send(orderCreated('e1'))).status).toBe('SKIPPED');
    expect(await countersOf(running)).toMatchObject({ leases_lost: 1 });
    expect(lines(running, 'warn').map((line) => line.message)).toEqual([
      expect.stringMatching(new RegExp(`^Lost the claim on ${KEY} before ${HANDLER} completed`)),
    ]);
  });

  it('counts and explains a release the store refused after a failure, leaving the new claim alone', async () => {
    const running = await start(new ScriptedStore({ forget: 'false' }), { inProgressTtl: 4_321 });
    running.get(OrdersLedger).script.set('order-e1', 'fail');
    expect((await running.sqs.send(orderCreated('e1'))).status).toBe('FAILED');
    expect(await countersOf(running)).toMatchObject({ failed: 1, leases_lost: 1, store_errors: 0 });
    expect(lines(running, 'warn').map((line) => line.message)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Lost the claim on ${KEY} before ${HANDLER} failed: another attempt owns the key now \\(the lease of ` +
            '4321 ms expired\\); its claim was left alone\\.$',
        ),
      ),
    ]);
  });

  describe.each<['completes' | 'fails' | 'skips', 'markComplete' | 'forget', string]>([
    ['completes', 'markComplete', 'OK'],
    ['fails', 'forget', 'FAILED'],
    ['skips', 'markComplete', 'SKIPPED'],
  ])('a lease the heartbeat lost, then a handler that %s', (ending, settle, status) => {
    it(`counts the lost lease once, though ${settle} is refused too`, async () => {
      const store = new ScriptedStore({ extend: 'false', [settle]: 'false' });
      const running = await start(store, { heartbeat: true, inProgressTtl: 300 });
      // The handler waits on this, then ends as `ending` says.
      let release!: () => void;
      const hold = new Promise<void>((resolve, reject) => {
        release = () =>
          ending === 'completes'
            ? resolve()
            : reject(ending === 'fails' ? new Error('shipping failed') : new SkipMessageException('shipped'));
      });
      running.get(OrdersLedger).script.set('order-e1', hold);
      const sent = running.sqs.send(orderCreated('e1'));
      await waitFor(
        () => lines(running, 'warn').length === 1,
        30_000,
        'the heartbeat to report the lost lease',
      );
      expect(lines(running, 'warn')[0].message).toMatch(
        new RegExp(
          `^Lost the claim on ${KEY} while ${HANDLER} runs: the lease could not be extended \\(it expired ` +
            'before a heartbeat reached the store, or another attempt took the key\\)\\.$',
        ),
      );
      release();
      expect((await sent).status).toBe(status);
      expect(await countersOf(running)).toMatchObject({ leases_lost: 1, store_errors: 0 });
      expect(lines(running, 'warn')).toHaveLength(2);
    });
  });

  // The in-memory store is answered at once, without its async methods: the same outcomes, counted
  // and explained alike, from the store itself rather than from a scripted one.
  describe('on the in-memory store, whose answers come at once', () => {
    it('logs nothing and counts no loss when the store records the completion', async () => {
      const running = await start(new InMemoryIdempotencyStore());
      expect((await running.sqs.send(orderCreated('e1'))).status).toBe('OK');
      expect(await countersOf(running)).toMatchObject({ handled: 1, leases_lost: 0, store_errors: 0 });
      expect(running.logs.lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual(
        [],
      );
    });

    it('counts and explains a completion refused because a redelivery took the expired lease', async () => {
      const clock = new FakeClock();
      const running = await start(new InMemoryIdempotencyStore({ clock: clock.read }), {
        inProgressTtl: 4_321,
      });
      const hold = deferred();
      running.get(OrdersLedger).script.set('order-e1', hold.promise);
      const first = running.sqs.send(orderCreated('e1'));
      await waitFor(() => running.get(OrdersLedger).calls === 1, 30_000, 'the first attempt to start');
      clock.advance(5_000);
      const redelivery = running.sqs.send(orderCreated('e1'));
      await waitFor(() => running.get(OrdersLedger).calls === 2, 30_000, 'the redelivery to take the key');
      hold.resolve();
      expect([(await first).status, (await redelivery).status]).toEqual(['OK', 'OK']);
      expect(await countersOf(running)).toMatchObject({ handled: 2, leases_lost: 1, store_errors: 0 });
      expect(lines(running, 'warn').map((line) => line.message)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^Lost the claim on ${KEY} before ${HANDLER} completed: the lease \\(inProgressTtl 4321 ms\\)`,
          ),
        ),
      ]);
    });

    it('counts a completion the store could not take (full of claims in flight) as lost, the record still OK', async () => {
      const clock = new FakeClock();
      const store = new InMemoryIdempotencyStore({ clock: clock.read, maxKeys: 2 });
      const running = await start(store, { inProgressTtl: 1_000 });
      const ledger = running.get(OrdersLedger);
      const [hold1, hold2] = [deferred(), deferred()];
      ledger.script.set('order-e1', hold1.promise);
      ledger.script.set('order-e2', hold2.promise);
      ledger.script.set('order-e3', hold2.promise);
      const first = running.sqs.send(orderCreated('e1'));
      await waitFor(() => ledger.calls === 1, 30_000, 'e1 to start');
      // e1's lease runs out under its handler; two new claims fill the store (e1's key swept on the way).
      clock.advance(2_000);
      const others = [running.sqs.send(orderCreated('e2')), running.sqs.send(orderCreated('e3'))];
      await waitFor(() => ledger.calls === 3, 30_000, 'e2 and e3 to start');
      expect(store.size).toBe(2);
      hold1.resolve();
      expect((await first).status).toBe('OK');
      expect(lines(running, 'error').map((line) => line.message)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^Store failed to mark ${KEY} completed \\(InMemoryIdempotencyStore is full: all 2 keys are claims ` +
              `in flight\\. .*\\); a duplicate arriving after the lease \\(1000 ms\\) may run ${HANDLER} again\\.$`,
          ),
        ),
      ]);
      expect(await countersOf(running)).toMatchObject({ store_errors: 1, completions_lost: 1 });
      hold2.resolve();
      expect((await Promise.all(others)).map((result) => result.status)).toEqual(['OK', 'OK']);
    });

    it("fails a record whose claim the store cannot take (onStoreError 'fail'), running no handler", async () => {
      const running = await start(new InMemoryIdempotencyStore({ maxKeys: 1 }));
      const ledger = running.get(OrdersLedger);
      const hold = deferred();
      ledger.script.set('order-e1', hold.promise);
      const first = running.sqs.send(orderCreated('e1'));
      await waitFor(() => ledger.calls === 1, 30_000, 'e1 to start');
      const { status, result } = await running.sqs.send(orderCreated('e2'));
      expect(status).toBe('FAILED');
      expect(result.error?.name).toBe('IdempotencyStoreError');
      expect(result.error?.message).toContain(
        'InMemoryIdempotencyStore is full: all 1 keys are claims in flight',
      );
      expect(ledger.calls).toBe(1);
      hold.resolve();
      expect((await first).status).toBe('OK');
      expect(await countersOf(running)).toMatchObject({ handled: 1, failed: 1, store_errors: 1 });
    });
  });

  it('runs no heartbeat on a store without extend (nothing to renew, nothing to fail)', async () => {
    const store = new ScriptedStore({}, false);
    const running = await start(store, { heartbeat: true, inProgressTtl: 300 });
    const hold = deferred();
    running.get(OrdersLedger).script.set('order-e1', hold.promise);
    const sent = running.sqs.send(orderCreated('e1'));
    await waitFor(() => running.get(OrdersLedger).calls === 1, 30_000, 'the handler to start');
    // Longer than a renewal period (a third of the lease): a heartbeat would have failed by now.
    await new Promise((resolve) => setTimeout(resolve, 250));
    hold.resolve();
    expect((await sent).status).toBe('OK');
    expect(await countersOf(running)).toMatchObject({ handled: 1, store_errors: 0 });
    expect(running.logs.lines.filter((line) => line.level === 'error')).toEqual([]);
  });
});
