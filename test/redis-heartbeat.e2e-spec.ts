import { Test, TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { IdempotencyModule, SqsModule } from '../lib';
import { IdempotencyStats } from '../lib/center';
import { RedisIdempotencyStore } from '../lib/stores/redis';
import { SqsTestClient } from '../lib/testing';
import { OrdersLedger, OrdersModule, deferred, orderCreated } from './fixtures/orders.fixture';
import { CapturingLogger } from './support/capturing-logger';
import { requires } from './support/prerequisites';
import { waitFor } from './support/wait-for';

const withRedis = requires('redis-server');

/**
 * The lease heartbeat, end to end on Redis: a handler that outlives `inProgressTtl` keeps its claim
 * while it runs (a duplicate meets IN_PROGRESS, not a second run), the heartbeat stops when the
 * handler settles, and a lost claim is counted (\`leases_lost\`) once. The waits are on what the
 * heartbeat did (its renewals, the key in Redis, the counters); the only sleeps check that nothing
 * more happens after it stopped.
 */
const LEASE = 600;

/** The Redis store, counting the extensions it was asked for. */
class CountingRedisStore extends RedisIdempotencyStore {
  extensions = 0;
  override extend(key: string, ttlMs: number, token: string): Promise<boolean> {
    this.extensions++;
    return super.extend(key, ttlMs, token);
  }
}

/**
 * The Redis store whose renewals reach Redis only when the test lets them go: an `extend` the store
 * answers after the completion, as calls overtake each other on DynamoDB's parallel HTTP or a
 * Postgres pool. Let go, one is sent to Redis (which refuses it: the key is completed) or fails.
 */
class OvertakenRedisStore extends CountingRedisStore {
  private readonly held: Array<(error?: Error) => Promise<unknown>> = [];
  override extend(key: string, ttlMs: number, token: string): Promise<boolean> {
    this.extensions++;
    return new Promise<boolean>((resolve, reject) => {
      this.held.push((error) => {
        const answer = error ? Promise.reject(error) : super.extend(key, ttlMs, token);
        answer.then(resolve, reject);
        return answer.catch(() => undefined);
      });
    });
  }
  /** Lets every held renewal go on to Redis, or fail with `error`; resolves once each has answered. */
  async release(error?: Error): Promise<void> {
    const answers = this.held.splice(0).map((answer) => answer(error));
    await Promise.all(answers);
    await new Promise((resolve) => setImmediate(resolve)); // the heartbeat's callbacks ran
  }
}

withRedis.describe('lease heartbeat on Redis', () => {
  let redis: Redis;
  let store: CountingRedisStore;
  let moduleRef: TestingModule;
  let logs: CapturingLogger;
  let keyPrefix: string;

  const start = async (heartbeat: boolean, Store: typeof CountingRedisStore = CountingRedisStore) => {
    keyPrefix = `heartbeat-${randomUUID()}`;
    store = new Store(redis);
    moduleRef = await Test.createTestingModule({
      imports: [
        IdempotencyModule.forRoot({
          store,
          keyPrefix,
          service: 'orders',
          inProgressTtl: LEASE,
          heartbeat,
          stats: {},
        }),
        SqsModule.forRoot({}),
        OrdersModule,
      ],
    }).compile();
    logs = new CapturingLogger();
    moduleRef.useLogger(logs);
    await moduleRef.init();
    return new SqsTestClient(moduleRef);
  };
  const redisKey = (id: string) => `${keyPrefix}:orders:order_created:${id}`;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const totals = async () => (await moduleRef.get(IdempotencyStats).snapshot()).totals;
  /** Renewals come every third of the lease: this many span more than two whole leases. */
  const RENEWALS_PAST_TWO_LEASES = 7;

  beforeEach(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  afterEach(async () => {
    await moduleRef?.close();
    await redis.quit();
  });

  it('keeps a long handler’s claim alive past inProgressTtl, and stops at settle', async () => {
    const sqs = await start(true);
    const ledger = moduleRef.get(OrdersLedger);
    const slow = deferred();
    ledger.script.set('order-slow', slow.promise);

    const sent = performance.now();
    const first = sqs.send(orderCreated('slow'));
    await waitFor(
      () => store.extensions >= RENEWALS_PAST_TWO_LEASES,
      LEASE * 10,
      `${RENEWALS_PAST_TWO_LEASES} renewals of the lease (more than two leases of time)`,
    );
    // A renewal every third of the lease, not more often: those renewals took their time (a tenth
    // of slack for the timer's rounding; no timer fires early by more).
    expect(performance.now() - sent).toBeGreaterThanOrEqual(RENEWALS_PAST_TWO_LEASES * (LEASE / 3) * 0.9);
    // Without the heartbeat the lease would have expired twice over: the duplicate would run.
    expect((await sqs.send(orderCreated('slow'))).status).toBe('IN_PROGRESS');
    expect(await redis.pttl(redisKey('slow'))).toBeGreaterThan(0);

    slow.resolve();
    expect((await first).status).toBe('OK');
    expect(await redis.get(redisKey('slow'))).toBe('1');
    const atSettle = store.extensions;
    await sleep(LEASE * 1.5); // nothing to wait for: no renewal may come after the settle
    expect(store.extensions).toBe(atSettle);
    expect(ledger.count('order-slow')).toBe(1);
    expect(await totals()).toMatchObject({ handled: 1, duplicates_in_flight: 1, leases_lost: 0 });
  });

  it('without the heartbeat, the same handler loses its claim and the duplicate runs (why it exists)', async () => {
    const sqs = await start(false);
    const ledger = moduleRef.get(OrdersLedger);
    const slow = deferred();
    ledger.script.set('order-slow', slow.promise);

    const first = sqs.send(orderCreated('slow'));
    await waitFor(() => ledger.calls === 1, 30_000, 'the claim of "slow" and its handler to start');
    await waitFor(
      async () => (await redis.exists(redisKey('slow'))) === 0,
      LEASE * 5,
      'the unrenewed lease of "slow" to expire in Redis',
    );
    ledger.script.delete('order-slow');
    expect((await sqs.send(orderCreated('slow'))).status).toBe('OK');
    slow.resolve();
    expect((await first).status).toBe('OK');
    expect(ledger.count('order-slow')).toBe(2);
    expect(store.extensions).toBe(0);
    // The stale owner's completion was refused (fenced): the key is the second attempt's completion,
    // and the loss is counted.
    expect(await redis.get(redisKey('slow'))).toBe('1');
    expect(await totals()).toMatchObject({ handled: 2, leases_lost: 1, completions_lost: 0 });
  });

  it('counts a lost extension once, stops renewing, and leaves the new owner’s claim alone', async () => {
    const sqs = await start(true);
    const ledger = moduleRef.get(OrdersLedger);
    const slow = deferred();
    ledger.script.set('order-taken', slow.promise);

    const first = sqs.send(orderCreated('taken'));
    await waitFor(() => store.extensions >= 1, LEASE * 5, 'the heartbeat’s first renewal of "taken"');
    // Another attempt owns the key now, as after a lease expiry during a GC pause or a partition.
    await redis.set(redisKey('taken'), 'another-attempt', 'PX', 30_000);
    await waitFor(async () => (await totals()).leases_lost === 1, LEASE * 5, 'the lost claim to be counted');
    const extensionsAfterLoss = store.extensions;
    await sleep(LEASE); // nothing to wait for: three beats' time in which no renewal may come
    expect(store.extensions).toBe(extensionsAfterLoss); // the heartbeat gave up on the lost claim

    slow.resolve();
    expect((await first).status).toBe('OK');
    expect(await redis.get(redisKey('taken'))).toBe('another-attempt');
    // The refused completion is the same loss: counted once per claim.
    expect(await totals()).toMatchObject({ handled: 1, leases_lost: 1, completions_lost: 0 });
    // The warnings themselves (their format is what an operator greps for): one for the heartbeat's
    // loss, one for the refused completion.
    expect(
      logs.matching('warn', /Lost the claim on ".*:taken" while .* runs: the lease could not be extended/),
    ).toHaveLength(1);
    expect(logs.matching('warn', /Lost the claim on ".*:taken" before .* completed/)).toHaveLength(1);
  });

  it.each([
    ['refused (the key is completed: no lease lost)', undefined],
    ['failed (no store error: the record settled)', new Error('socket hang up')],
  ])('reports nothing for a renewal answered after the settle: %s', async (_answer, error) => {
    const sqs = await start(true, OvertakenRedisStore);
    const overtaken = store as OvertakenRedisStore;
    const ledger = moduleRef.get(OrdersLedger);
    const slow = deferred();
    ledger.script.set('order-overtaken', slow.promise);

    const first = sqs.send(orderCreated('overtaken'));
    await waitFor(() => store.extensions >= 1, LEASE * 5, 'a renewal of "overtaken" to be in flight');
    slow.resolve();
    expect((await first).status).toBe('OK');
    expect(await redis.get(redisKey('overtaken'))).toBe('1');

    // The completion overtook the renewal; its answer comes now, after the heartbeat stopped.
    await overtaken.release(error);
    expect(await totals()).toMatchObject({ handled: 1, leases_lost: 0, store_errors: 0 });
    expect(logs.matching('warn', /Lost the claim/)).toEqual([]);
    expect(logs.matching('error', /Store failed/)).toEqual([]);
  });
});
