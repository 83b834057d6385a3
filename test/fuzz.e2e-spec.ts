import fc from 'fast-check';
import { SqsRecordLike, SqsRecordStatus } from '../lib';
import { buildSqsRecord } from '../lib/testing';
import { OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { createTestApp, TestApp } from './support/test-app';

/**
 * Throws random mutations of valid events at the Lambda host (a fixed seed and number of runs, so
 * a failure replays): whatever arrives, the invocation answers, every record gets one of the
 * statuses, only valid events reach the handler (at most once per key), and nothing leaks into
 * Object.prototype.
 */

const STATUSES: SqsRecordStatus[] = ['OK', 'SKIPPED', 'DUPLICATE', 'IN_PROGRESS', 'FAILED', 'INVALID'];
const FAILED: SqsRecordStatus[] = ['FAILED', 'INVALID', 'IN_PROGRESS'];

const hostileString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom(
    '',
    '__proto__',
    'constructor',
    'prototype',
    '\u0000',
    '\ud800',
    '\ufeff',
    'order_created',
    'x'.repeat(300),
  ),
);
const anyJson = fc.jsonValue({ maxDepth: 4 });
const anyValue = fc.oneof(anyJson, hostileString, fc.constantFrom(NaN, Infinity, 2 ** 60, -0));

/** A valid event with some fields replaced, dropped or added. */
const mutatedEvent = fc
  .record({
    id: fc.oneof(fc.uuid(), fc.constantFrom('dup-1', 'dup-2')),
    mutations: fc.array(
      fc.oneof(
        fc.record({
          op: fc.constant('set' as const),
          field: fc.constantFrom('type', 'id', 'orderId', 'amount', 'extra'),
          value: anyValue,
        }),
        fc.record({
          op: fc.constant('drop' as const),
          field: fc.constantFrom('type', 'id', 'orderId', 'amount'),
        }),
        fc.record({ op: fc.constant('inject' as const), field: hostileString, value: anyValue }),
      ),
      { maxLength: 3 },
    ),
  })
  .map(({ id, mutations }) => {
    const event: Record<string, unknown> = { ...orderCreated(id, `order-${id}`) };
    for (const mutation of mutations) {
      if (mutation.op === 'drop') delete event[mutation.field];
      else
        Object.defineProperty(event, mutation.field, {
          value: mutation.value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
    }
    return JSON.stringify(event);
  });

/** A raw body: a mutated event, any JSON, or garbage. */
const body = fc.oneof(
  { weight: 6, arbitrary: mutatedEvent },
  { weight: 2, arbitrary: anyJson.map((value) => JSON.stringify(value) ?? 'undefined') },
  { weight: 1, arbitrary: hostileString },
  { weight: 1, arbitrary: mutatedEvent.map((text) => text.slice(0, Math.max(0, text.length - 3))) },
);

/** A record with some fields broken. */
const record = fc
  .record({
    body,
    fifo: fc.boolean(),
    dropField: fc.option(
      fc.constantFrom('messageId', 'body', 'attributes', 'messageAttributes', 'eventSource'),
      { freq: 5 },
    ),
  })
  .map(({ body: text, fifo, dropField }) => {
    const built = buildSqsRecord(text, fifo ? { queue: 'fuzz.fifo', groupId: 'g' } : { queue: 'fuzz' });
    if (dropField) delete (built as unknown as Record<string, unknown>)[dropField];
    return built;
  });

describe('fuzzing the Lambda host', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await createTestApp({ sqs: { recordLog: false }, imports: [OrdersModule] });
  });
  afterAll(() => app.close());

  it('answers every batch, with a valid status per record, without pollution or double runs', async () => {
    const ledger = app.get(OrdersLedger);
    await fc.assert(
      fc.asyncProperty(
        fc.array(record, { minLength: 1, maxLength: 12 }),
        async (records: SqsRecordLike[]) => {
          // A batch comes from one queue.
          const fifo = records[0].eventSourceARN?.endsWith('.fifo');
          const batch = records.map((r) => (fifo ? { ...r, eventSourceARN: records[0].eventSourceARN } : r));
          const { results, response } = await app.sqs.sendRecords(batch);
          expect(results).toHaveLength(batch.length);
          for (const result of results) expect(STATUSES).toContain(result.status);
          const failedIds = results
            .filter((result) => FAILED.includes(result.status))
            .map((result) => result.messageId);
          expect(response.batchItemFailures.map((failure) => failure.itemIdentifier)).toEqual(failedIds);
          for (const result of results) {
            if (result.status === 'INVALID') expect(result.error?.name).toMatch(/InvalidSqsMessageError/);
          }
          expect(Object.prototype).not.toHaveProperty('polluted');
          expect(Object.keys(Object.prototype)).toEqual([]);
        },
      ),
      { numRuns: 300, seed: 20261129 },
    );
    // The handler ran at most once per idempotency key, whatever the mutations.
    expect(ledger.keys.length).toBeGreaterThan(50);
    expect(new Set(ledger.keys).size).toBe(ledger.keys.length);
  });
});
