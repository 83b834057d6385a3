import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { IdempotencyStats } from '../lib/center';
import { RedisIdempotencyStore } from '../lib/stores/redis';
import { buildSqsRecord, SqsTestClient } from '../lib/testing';
import type { SqsRecordLike } from '../lib';
import { SqsRecordTimeoutError } from '../lib/sqs/sqs-message.errors';
import { SqsQueueRegistry } from '../lib/sqs/nest/sqs-queue.registry';
import { OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { requires } from './support/prerequisites';
import { createTestApp, TestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

/**
 * A record that outruns the polling host's `handleMessageTimeout` is one delivery with one outcome:
 * it is logged, journaled and counted once, as FAILED with the time it ran (the timeout), and left for
 * redelivery. Its handler runs on (JavaScript cannot stop it) under its claim, as before; when it ends,
 * a warning says how, and nothing is logged or counted a second time. The claim decides the redelivery:
 * in flight while the handler runs, a duplicate once it succeeded, run again once it failed.
 */

const TIMEOUT_MS = 100;
const redis = requires('redis-server');

/** A promise the test settles: the handler awaits it (the ledger's script). */
function gate() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((done, fail) => ((resolve = done), (reject = fail)));
  return { promise, resolve, reject };
}

redis.describe('a record past handleMessageTimeout, on Redis', () => {
  let app: TestApp;
  let client: Redis;
  let ledger: OrdersLedger;
  beforeEach(async () => {
    client = new Redis(process.env.REDIS_URL!);
    app = await createTestApp({
      idempotency: {
        store: new RedisIdempotencyStore(client, { serverCheck: 'off' }),
        service: 'orders',
        keyPrefix: `timeout-${randomUUID()}`,
        stats: {},
      },
      imports: [OrdersModule],
    });
    ledger = app.get(OrdersLedger);
  });
  afterEach(async () => {
    await app?.close();
    await client.quit();
  });

  /** One batch of the polling host, under handleMessageTimeout. */
  const poll = (record: SqsRecordLike, recordTimeoutMs: number | undefined = TIMEOUT_MS) =>
    app.get(SqsQueueRegistry).dispatchBatch([record], { queue: 'orders', recordTimeoutMs });
  const recordLines = (messageId: string) =>
    app.logs.lines.filter(
      (line) => line.context === 'SqsRecord' && line.message.includes(`messageId=${messageId} `),
    );
  const lateWarnings = (messageId: string) =>
    app.logs.matching('warn', new RegExp(`^Message ${messageId} on queue "orders"`), 'SqsRecord');
  const countersOf = async () =>
    (await app.get(IdempotencyStats).snapshot()).eventTypes.find(
      (type) => type.eventType === 'order_created',
    )!;

  it('is logged and counted once, as FAILED with the time it ran; its late success is a warning', async () => {
    const hold = gate();
    ledger.script.set('o-slow', hold.promise);
    const record = buildSqsRecord(orderCreated('slow-1', 'o-slow'), { queue: 'orders' });

    const [timedOut] = await poll(record);

    expect(timedOut.status).toBe('FAILED');
    expect(timedOut.error).toBeInstanceOf(SqsRecordTimeoutError);
    expect(timedOut).toMatchObject({ eventType: 'order_created', key: 'slow-1' });
    expect(timedOut.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    const [failedLine] = recordLines(record.messageId);
    expect(failedLine.message).toMatch(
      new RegExp(`^status=FAILED type=order_created key=slow-1 messageId=${record.messageId} queue=orders `),
    );
    expect(Number(/durationMs=(\S+)/.exec(failedLine.message)![1])).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);

    // The redelivery meets the claim of the attempt still running: a delivery of its own.
    const redelivered = SqsTestClient.redelivery(record);
    expect((await poll(redelivered))[0].status).toBe('IN_PROGRESS');

    hold.resolve();
    await waitFor(() => lateWarnings(record.messageId).length > 0, 5_000, 'the late end to be warned about');
    expect(lateWarnings(record.messageId)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Message ${record.messageId} on queue "orders" \\(order_created\\): its handler ended with status OK ` +
            `after \\d+\\.\\d ms, past handleMessageTimeout \\(${TIMEOUT_MS} ms\\), which had already failed the ` +
            'record and left it for redelivery; the record stays FAILED and is not counted again\\. ' +
            'Raise handleMessageTimeout if the handler needs longer\\.$',
        ),
      ),
    ]);
    expect(recordLines(record.messageId).map((line) => line.message.split(' ')[0])).toEqual([
      'status=FAILED',
      'status=IN_PROGRESS',
    ]);
    const { records } = await app.get(IdempotencyStats).activity();
    const journaled = records.filter((entry) => entry.messageId === record.messageId);
    expect(journaled.map((entry) => entry.status).sort()).toEqual(['FAILED', 'IN_PROGRESS']);
    expect(journaled.find((entry) => entry.status === 'FAILED')!.durationMs).toBeGreaterThanOrEqual(
      TIMEOUT_MS - 5,
    );
    const stats = await countersOf();
    expect(stats.handlers.map((handler) => handler.handler)).toEqual(['OrdersHandler.onOrderCreated']);
    expect(stats.totals).toMatchObject({ handled: 0, failed: 1, duplicates_in_flight: 1 });

    // The claim is what it was: the late success completed the key, so the next redelivery is a duplicate.
    expect((await poll(SqsTestClient.redelivery(redelivered)))[0].status).toBe('DUPLICATE');
    expect(ledger.count('o-slow')).toBe(1);
  });

  it('warns about a handler that fails after its timeout with its reason, and its claim is released as before', async () => {
    const hold = gate();
    ledger.script.set('o-doomed', hold.promise);
    const record = buildSqsRecord(orderCreated('doomed-1', 'o-doomed'), { queue: 'orders' });

    expect((await poll(record))[0].status).toBe('FAILED');
    hold.reject(new Error('the warehouse is closed'));
    await waitFor(() => lateWarnings(record.messageId).length > 0, 5_000, 'the late end to be warned about');

    expect(lateWarnings(record.messageId)[0]).toContain(
      'its handler ended with status FAILED ("the warehouse is closed") after ',
    );
    expect(recordLines(record.messageId)).toHaveLength(1);
    expect((await countersOf()).totals).toMatchObject({ handled: 0, failed: 1 });

    // The failure released the claim: the redelivery runs the handler again.
    ledger.script.delete('o-doomed');
    expect((await poll(SqsTestClient.redelivery(record)))[0].status).toBe('OK');
    expect(ledger.count('o-doomed')).toBe(1);
    expect((await countersOf()).totals).toMatchObject({ handled: 1, failed: 1 });
  });

  it('logs a record done within its timeout once, with no warning', async () => {
    const record = buildSqsRecord(orderCreated('quick-1', 'o-quick'), { queue: 'orders' });
    expect((await poll(record, 5_000))[0].status).toBe('OK');
    expect(recordLines(record.messageId)).toHaveLength(1);
    expect(lateWarnings(record.messageId)).toEqual([]);
    expect((await countersOf()).totals).toMatchObject({ handled: 1, failed: 0 });
  });
});

describe('a record past handleMessageTimeout before any handler runs (a slow async decoder)', () => {
  it('is counted once, as FAILED under no handler', async () => {
    let release!: () => void;
    const decoded = new Promise<void>((resolve) => (release = resolve));
    const app = await createTestApp({
      idempotency: { stats: {} },
      sqs: {
        // Decrypting or fetching a schema: the record's time runs out before its handler is chosen.
        decoder: async (text) => {
          await decoded;
          return JSON.parse(text);
        },
      },
      imports: [OrdersModule],
    });
    try {
      const record = buildSqsRecord(orderCreated('early-1', 'o-early'), { queue: 'orders' });
      const [timedOut] = await app
        .get(SqsQueueRegistry)
        .dispatchBatch([record], { queue: 'orders', recordTimeoutMs: TIMEOUT_MS });
      expect(timedOut.status).toBe('FAILED');
      expect(timedOut.error).toBeInstanceOf(SqsRecordTimeoutError);
      const { eventTypes } = await app.get(IdempotencyStats).snapshot();
      const counted = eventTypes
        .filter(({ totals }) => totals.failed + totals.handled > 0)
        .map(({ eventType, totals }) => ({ eventType, failed: totals.failed, handled: totals.handled }));
      expect(counted).toEqual([{ eventType: '(unknown)', failed: 1, handled: 0 }]);
      expect(app.get(OrdersLedger).count('o-early')).toBe(0);
    } finally {
      release();
      await app.close();
    }
  });
});
