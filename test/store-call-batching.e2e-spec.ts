import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { AcquireResult, BatchClaim, BatchCompletion } from '../lib/stores';
import { IdempotencyModuleOptions, IdempotencyStore } from '../lib';
import { IdempotencyStats } from '../lib/center';
import { RedisIdempotencyStore } from '../lib/stores/redis';
import { OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { requires } from './support/prerequisites';
import { RedisServerHandle, startRedisServer } from './support/redis-server';
import { createTestApp, TestApp, TestAppOptions } from './support/test-app';

const withRedis = requires('redis-server');

/**
 * Batched store calls on a real Redis (`lib/idempotency/store-call-batcher.ts`): the claims of a
 * Lambda batch go out as one `tryAcquireMany`, its completions as one `markCompleteMany`, and the
 * rules of the single calls still hold: the FIFO rules claim nothing they do not run, and a batch
 * call that fails, or answers outside the protocol, fails each of its records as a failing single
 * call fails one.
 */
withRedis.describe('batched store calls on Redis', () => {
  let server: RedisServerHandle;
  let redis: Redis;
  let app: TestApp | undefined;
  let counting: CountingStore;

  beforeAll(async () => {
    // A server of its own: MONITOR sees every client's commands.
    server = await startRedisServer();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const start = async (
    wrap: (store: IdempotencyStore) => CountingStore = (store) => new CountingStore(store),
    options: Partial<IdempotencyModuleOptions> = {},
    sqs: TestAppOptions['sqs'] = {},
  ) => {
    await redis.flushdb(); // every test starts from an empty server of its own
    counting = wrap(new RedisIdempotencyStore(redis, { serverCheck: 'off' }));
    app = await createTestApp({
      idempotency: { store: counting, service: 'orders', stats: {}, ...options },
      imports: [OrdersModule],
      sqs,
    });
    const stored = async (id: string) =>
      counting.inspect(`idempotency:orders:order_created:${id}`).then((inspection) => inspection.state);
    return { app, ledger: app.get(OrdersLedger), stored };
  };
  const tenOrders = (prefix: string) => Array.from({ length: 10 }, (_, i) => orderCreated(`${prefix}${i}`));

  describe('performance contract: round trips of one 10-record Lambda batch', () => {
    it('first sightings: one tryAcquireMany and one markCompleteMany, two script calls on the server', async () => {
      const { app } = await start();
      await app.sqs.sendBatch(tenOrders('warm')); // the scripts loaded (EVAL once, then EVALSHA)
      counting.reset();

      let statuses: string[] = [];
      const sent = await commandsSentDuring(server.url, async () => {
        ({ statuses } = await app.sqs.sendBatch(tenOrders('e')));
      });

      expect(statuses).toEqual(Array(10).fill('OK'));
      expect(counting.counts).toEqual({ tryAcquireMany: 1, markCompleteMany: 1 });
      expect(counting.sizes).toEqual([10, 10]);
      expect(sent).toEqual(['evalsha', 'evalsha']);
    });

    it('duplicates: one tryAcquireMany, one script call on the server', async () => {
      const { app, ledger } = await start();
      await app.sqs.sendBatch(tenOrders('e'));
      counting.reset();

      let statuses: string[] = [];
      const sent = await commandsSentDuring(server.url, async () => {
        ({ statuses } = await app.sqs.sendBatch(tenOrders('e')));
      });

      expect(statuses).toEqual(Array(10).fill('DUPLICATE'));
      expect(ledger.calls).toBe(10);
      expect(counting.counts).toEqual({ tryAcquireMany: 1 });
      expect(sent).toEqual(['evalsha']);
    });

    it('a store without the batch methods is called key by key, with the same outcomes', async () => {
      const { app, stored } = await start((store) => new CountingStore(store, { batches: false }));
      await app.sqs.sendBatch(tenOrders('warm'));
      counting.reset();
      let statuses: string[] = [];
      const sent = await commandsSentDuring(server.url, async () => {
        ({ statuses } = await app.sqs.sendBatch(tenOrders('e')));
      });
      expect(statuses).toEqual(Array(10).fill('OK'));
      expect(counting.counts).toEqual({ tryAcquire: 10, markComplete: 10 });
      // One SET NX GET PX per claim, one EVALSHA per completion.
      expect(sent.sort()).toEqual([...Array(10).fill('evalsha'), ...Array(10).fill('set')]);
      expect((await app.sqs.sendBatch(tenOrders('e'))).statuses).toEqual(Array(10).fill('DUPLICATE'));
      expect(await stored('e3')).toBe('COMPLETED');
    });
  });

  describe('FIFO rules: nothing is claimed for a record that is not attempted', () => {
    const ids = ['a', 'b', 'c', 'd'];

    it('halt_batch: the records after a failure are never claimed, the failed one is released', async () => {
      const { app, ledger, stored } = await start(undefined, {}, { fifoFailureMode: 'halt_batch' });
      ledger.script.set('order-b', 'fail');
      const { statuses } = await app.sqs.sendBatch(
        ids.map((id) => orderCreated(id)),
        { fifo: true, groups: ['A', 'B', 'A', 'B'] },
      );
      expect(statuses).toEqual(['OK', 'FAILED', 'FAILED', 'FAILED']);
      expect(await Promise.all(ids.map(stored))).toEqual(['COMPLETED', 'UNKNOWN', 'UNKNOWN', 'UNKNOWN']);
    });

    it('isolate_groups: the groups claim side by side in one batch call; a failed group leaves its later records unclaimed', async () => {
      const { app, ledger, stored } = await start(undefined, {}, { fifoFailureMode: 'isolate_groups' });
      ledger.script.set('order-a', 'fail');
      const { statuses } = await app.sqs.sendBatch(
        ids.map((id) => orderCreated(id)),
        { fifo: true, groups: ['A', 'B', 'A', 'B'] },
      );
      expect(statuses).toEqual(['FAILED', 'OK', 'FAILED', 'OK']);
      expect(await Promise.all(ids.map(stored))).toEqual(['UNKNOWN', 'COMPLETED', 'UNKNOWN', 'COMPLETED']);
      // The heads of the two groups were claimed together; the rest one at a time, in order.
      expect(counting.sizes[0]).toBe(2);
    });
  });

  describe('a batch call that fails fails each of its records as a failing single call does', () => {
    const refused = new Error('connection refused');

    it.each([
      ['rejects', () => Promise.reject(refused)],
      [
        'throws',
        () => {
          throw refused;
        },
      ],
    ])('tryAcquireMany %s: every record fails closed, the handler never runs', async (_how, failure) => {
      const { app, ledger } = await start((store) => new CountingStore(store, { tryAcquireMany: failure }));
      const { statuses, results } = await app.sqs.sendBatch(tenOrders('e'));
      expect(statuses).toEqual(Array(10).fill('FAILED'));
      for (const result of results) {
        expect(result.error?.name).toBe('IdempotencyStoreError');
        expect(result.error?.message).toContain('connection refused');
        expect(result.error?.message).toContain(result.messageId);
      }
      expect(ledger.calls).toBe(0);
      expect((await app.get(IdempotencyStats).snapshot()).totals.store_errors).toBe(10);
    });

    it("tryAcquireMany fails under onStoreError: 'process': every record runs without dedup", async () => {
      const { app, ledger, stored } = await start(
        (store) => new CountingStore(store, { tryAcquireMany: () => Promise.reject(refused) }),
        { onStoreError: 'process' },
      );
      const { statuses } = await app.sqs.sendBatch(tenOrders('e'));
      expect(statuses).toEqual(Array(10).fill('OK'));
      expect(ledger.calls).toBe(10);
      // Unclaimed, so nothing to complete: the store holds nothing for them.
      expect(counting.counts.markCompleteMany).toBeUndefined();
      expect(await stored('e0')).toBe('UNKNOWN');
    });

    it.each([
      ['answers too few', async () => [AcquireResult.ACQUIRED]],
      ['returns no promise', () => [AcquireResult.ACQUIRED] as unknown as Promise<AcquireResult[]>],
    ])('tryAcquireMany %s: every record fails closed', async (_how, answer) => {
      const { app, ledger } = await start((store) => new CountingStore(store, { tryAcquireMany: answer }));
      const { statuses, results } = await app.sqs.sendBatch(tenOrders('e'));
      expect(statuses).toEqual(Array(10).fill('FAILED'));
      expect(results[0].error?.message).toContain('tryAcquireMany');
      expect(ledger.calls).toBe(0);
    });

    it('one answer outside the protocol fails its record alone', async () => {
      const { app, ledger, stored } = await start(
        (store) =>
          new CountingStore(store, {
            tryAcquireMany: async (claims, inner) => {
              const answers = await inner(claims);
              answers[3] = 'MAYBE' as AcquireResult;
              return answers;
            },
          }),
      );
      const { statuses, results } = await app.sqs.sendBatch(tenOrders('e'));
      expect(statuses).toEqual([...Array(3).fill('OK'), 'FAILED', ...Array(6).fill('OK')]);
      expect(results[3].error?.message).toContain('"MAYBE"');
      expect(ledger.calls).toBe(9);
      // Its key was claimed by the store all the same, and is left to its lease (as a lost answer is).
      expect(await stored('e3')).toBe('IN_PROGRESS');
    });

    it('markCompleteMany rejects: the records succeed (their effects happened), each completion counted as lost', async () => {
      const { app, ledger, stored } = await start(
        (store) => new CountingStore(store, { markCompleteMany: () => Promise.reject(refused) }),
      );
      const { statuses } = await app.sqs.sendBatch(tenOrders('e'));
      expect(statuses).toEqual(Array(10).fill('OK'));
      expect(ledger.calls).toBe(10);
      expect((await app.get(IdempotencyStats).snapshot()).totals).toMatchObject({
        store_errors: 10,
        completions_lost: 10,
      });
      // Left in progress until the lease ends, as after a failing markComplete.
      expect(await stored('e0')).toBe('IN_PROGRESS');
    });

    it('markCompleteMany says a claim was lost: that record is counted as a lost lease, the others complete', async () => {
      const { app, stored } = await start(
        (store) =>
          new CountingStore(store, {
            markCompleteMany: async (completions, inner) => {
              const answers = await inner(completions.filter((_, i) => i !== 5));
              answers.splice(5, 0, false);
              return answers;
            },
          }),
      );
      const { statuses } = await app.sqs.sendBatch(tenOrders('e'));
      expect(statuses).toEqual(Array(10).fill('OK'));
      expect((await app.get(IdempotencyStats).snapshot()).totals.leases_lost).toBe(1);
      expect(await stored('e4')).toBe('COMPLETED');
      expect(await stored('e5')).toBe('IN_PROGRESS');
    });
  });
});

type Inner<E, A> = (entries: readonly E[]) => Promise<A[]>;

interface CountingOptions {
  /** Whether the wrapper has the batch methods. Default: when the wrapped store has them. */
  batches?: boolean;
  tryAcquireMany?: (
    claims: readonly BatchClaim[],
    inner: Inner<BatchClaim, AcquireResult>,
  ) => Promise<AcquireResult[]>;
  markCompleteMany?: (
    completions: readonly BatchCompletion[],
    inner: Inner<BatchCompletion, boolean>,
  ) => Promise<boolean[]>;
}

/** Forwards to a store, counting its calls per method (and the size of each batch call). */
class CountingStore implements IdempotencyStore {
  counts: Record<string, number> = {};
  sizes: number[] = [];
  readonly shared = true;
  tryAcquireMany?: (claims: readonly BatchClaim[]) => Promise<AcquireResult[]>;
  markCompleteMany?: (completions: readonly BatchCompletion[]) => Promise<boolean[]>;

  constructor(
    private readonly inner: IdempotencyStore,
    options: CountingOptions = {},
  ) {
    if (options.batches === false) return;
    const acquireMany = (claims: readonly BatchClaim[]) => inner.tryAcquireMany!(claims);
    const completeMany = (completions: readonly BatchCompletion[]) => inner.markCompleteMany!(completions);
    this.tryAcquireMany = (claims) => {
      this.count('tryAcquireMany', claims.length);
      return options.tryAcquireMany ? options.tryAcquireMany(claims, acquireMany) : acquireMany(claims);
    };
    this.markCompleteMany = (completions) => {
      this.count('markCompleteMany', completions.length);
      return options.markCompleteMany
        ? options.markCompleteMany(completions, completeMany)
        : completeMany(completions);
    };
  }

  reset(): void {
    this.counts = {};
    this.sizes = [];
  }

  tryAcquire(key: string, ttlMs: number, token: string) {
    this.count('tryAcquire');
    return this.inner.tryAcquire(key, ttlMs, token);
  }
  markComplete(key: string, ttlMs: number, token: string) {
    this.count('markComplete');
    return this.inner.markComplete(key, ttlMs, token);
  }
  forget(key: string, token: string) {
    this.count('forget');
    return this.inner.forget(key, token);
  }
  extend(key: string, ttlMs: number, token: string) {
    this.count('extend');
    return this.inner.extend!(key, ttlMs, token);
  }
  /** Not counted: the tests read the store through it. */
  inspect(key: string) {
    return this.inner.inspect!(key);
  }

  private count(method: string, size?: number): void {
    this.counts[method] = (this.counts[method] ?? 0) + 1;
    if (size !== undefined) this.sizes.push(size);
  }
}

/**
 * The commands clients sent the server while `run` ran, by name, in order (MONITOR: a command a
 * script runs is tagged `lua` and left out; what crossed the wire is what counts). A marker sent
 * afterwards on another connection says when the monitor has seen them all.
 */
async function commandsSentDuring(url: string, run: () => Promise<unknown>): Promise<string[]> {
  // Both connected (and past ioredis's ready check) before the monitor starts.
  const probe = new Redis(url);
  const watcher = new Redis(url);
  await Promise.all([probe.ping(), watcher.ping()]);
  const monitor = await watcher.monitor();
  const marker = `end-${randomUUID()}`;
  const seen: string[] = [];
  let ended!: () => void;
  const end = new Promise<void>((resolve) => (ended = resolve));
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    const name = String(args[0]).toLowerCase();
    if (name === 'echo' && args[1] === marker) ended();
    else if (source !== 'lua') seen.push(name);
  });
  try {
    await run();
    await probe.echo(marker);
    await end;
  } finally {
    monitor.disconnect();
    watcher.disconnect();
    probe.disconnect();
  }
  return seen;
}
