import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { InvalidSqsMessageError } from '../sqs/sqs-message.errors';
import { hashKeyForDisplay } from '../idempotency/idempotency-key';
import type { SqsRecordStatus } from '../idempotency/record-outcome';
import { MAX_JOURNAL_TYPES, OTHER_EVENT_TYPES, RecordJournal } from './record-journal';

const MINUTE = 60_000;
const T0 = Date.parse('2026-11-29T12:00:10.000Z');

function journalAt(options: { recentPerType?: number } = {}) {
  const clock = { now: T0 };
  const journal = new RecordJournal({ ...options, clock: () => clock.now });
  return { journal, clock };
}

/** One finished record, as a host hands it over. */
function record(
  journal: RecordJournal,
  status: SqsRecordStatus,
  eventType: string | undefined,
  key: string | undefined,
  messageId: string,
  queue: string,
  receiveCount: number,
  durationMs: number,
  error: Error | undefined,
  hashKeys: boolean,
): void {
  journal.record(queue, { status, eventType, key, messageId, durationMs, error }, receiveCount, hashKeys);
}

const unrouted = (type: string) =>
  new InvalidSqsMessageError(
    'm-1',
    'orders',
    `no handler for event type ${JSON.stringify(type)} on queue "orders" (handled: order_created)`,
    type,
  );

describe('RecordJournal', () => {
  it('counts every record per event type, status and minute, and keeps only the records worth showing', () => {
    const { journal, clock } = journalAt();
    for (let i = 0; i < 3; i++)
      record(journal, 'OK', 'order_created', `k${i}`, `m${i}`, 'orders', 1, 2, undefined, false);
    record(journal, 'DUPLICATE', 'order_created', 'k0', 'm9', 'orders', 2, 0.4, undefined, false);
    clock.now += MINUTE;
    record(
      journal,
      'FAILED',
      'order_created',
      'k1',
      'm8',
      'orders',
      3,
      12.34,
      new Error('warehouse busy'),
      false,
    );

    const minute = Math.floor(T0 / MINUTE);
    expect(journal.trends()).toEqual([
      { minute, eventType: 'order_created', status: 'OK', count: 3 },
      { minute, eventType: 'order_created', status: 'DUPLICATE', count: 1 },
      { minute: minute + 1, eventType: 'order_created', status: 'FAILED', count: 1 },
    ]);
    // Newest first; the three OK records are counted, not kept.
    expect(journal.recent()).toEqual([
      {
        at: new Date(T0 + MINUTE).toISOString(),
        status: 'FAILED',
        eventType: 'order_created',
        routed: true,
        key: 'k1',
        messageId: 'm8',
        queue: 'orders',
        receiveCount: 3,
        durationMs: 12.3,
        reason: 'warehouse busy',
      },
      expect.objectContaining({ status: 'DUPLICATE', key: 'k0', messageId: 'm9', receiveCount: 2 }),
    ]);
  });

  it('forgets the minutes older than an hour, and counts a clock that steps back into its newest minute', () => {
    const { journal, clock } = journalAt();
    record(journal, 'OK', 't', undefined, 'm', 'q', 1, 1, undefined, false);
    clock.now += 30 * MINUTE;
    record(journal, 'OK', 't', undefined, 'm', 'q', 1, 1, undefined, false);
    clock.now -= 10 * MINUTE; // NTP stepped the clock back
    record(journal, 'OK', 't', undefined, 'm', 'q', 1, 1, undefined, false);
    clock.now += 10 * MINUTE + 31 * MINUTE; // 61 minutes after the first record
    const minute = Math.floor(T0 / MINUTE);
    expect(journal.trends()).toEqual([{ minute: minute + 30, eventType: 't', status: 'OK', count: 2 }]);
    clock.now += 60 * MINUTE;
    expect(journal.trends()).toEqual([]);
  });

  it('keeps the last N failures apart from the last N duplicates and skips, per event type', () => {
    const { journal } = journalAt({ recentPerType: 3 });
    record(journal, 'FAILED', 'a', 'f1', 'm', 'q', 1, 1, new Error('first failure'), false);
    for (let i = 0; i < 50; i++) record(journal, 'DUPLICATE', 'a', `d${i}`, 'm', 'q', 1, 1, undefined, false);
    record(journal, 'SKIPPED', 'b', 's1', 'm', 'q', 1, 1, new Error('already shipped'), false);
    const ofA = journal.recent().filter((record) => record.eventType === 'a');
    // The storm of duplicates did not push the failure out.
    expect(ofA.map((record) => record.key)).toEqual(['d49', 'd48', 'd47', 'f1']);
    expect(journal.recent().filter((record) => record.eventType === 'b')).toEqual([
      expect.objectContaining({ status: 'SKIPPED', reason: 'already shipped' }),
    ]);
  });

  it('keeps a hash instead of the key when the log hides keys, and cuts long reasons', () => {
    const { journal } = journalAt();
    record(journal, 'FAILED', 'a', 'alice@example.com', 'm', 'q', 1, 1, new Error('x'.repeat(800)), true);
    const [kept] = journal.recent();
    expect(kept.key).toBe(hashKeyForDisplay('alice@example.com'));
    expect(kept.keyHashed).toBe(true);
    expect(kept.reason).toHaveLength(501);
    expect(JSON.stringify(journal.recent())).not.toContain('alice');
  });

  it('lists the event types messages named that no handler routes, bounded, under the unknown type', () => {
    const { journal, clock } = journalAt();
    record(journal, 'INVALID', undefined, undefined, 'm1', 'orders', 1, 1, unrouted('order_shipped'), false);
    clock.now += 1_000;
    record(journal, 'INVALID', undefined, undefined, 'm2', 'orders', 1, 1, unrouted('order_shipped'), false);
    record(
      journal,
      'INVALID',
      undefined,
      undefined,
      'm3',
      'orders',
      1,
      1,
      new InvalidSqsMessageError('m3', 'orders', 'the body is not JSON'),
      false,
    );
    expect(journal.unrouted()).toEqual([
      { eventType: 'order_shipped', count: 2, lastSeenAt: new Date(T0 + 1_000).toISOString() },
    ]);
    expect(journal.recent().map((record) => [record.eventType, record.routed])).toEqual([
      ['(unknown)', false],
      ['order_shipped', false],
      ['order_shipped', false],
    ]);
    // Trends of unrouted records go under (unknown): producers cannot add event types.
    expect(journal.trends()).toEqual([
      expect.objectContaining({ eventType: '(unknown)', status: 'INVALID', count: 3 }),
    ]);

    for (let i = 0; i < 120; i++) {
      clock.now += 1;
      record(journal, 'INVALID', undefined, undefined, 'm', 'q', 1, 1, unrouted(`type-${i}`), false);
    }
    const types = journal.unrouted();
    expect(types).toHaveLength(50);
    expect(types[0].eventType).toBe('type-119');
    expect(types.at(-1)!.eventType).toBe('type-70');
  });

  it('hands out what is new since the last call, for the shared stats store', () => {
    const { journal } = journalAt();
    record(journal, 'OK', 'a', 'k', 'm', 'q', 1, 1, undefined, false);
    record(journal, 'DUPLICATE', 'a', 'k', 'm', 'q', 1, 1, undefined, false);
    const first = journal.takeUnpublished();
    expect(first.records.map((record) => record.status)).toEqual(['DUPLICATE']);
    expect(first.trends.map(({ status, count }) => [status, count])).toEqual([
      ['OK', 1],
      ['DUPLICATE', 1],
    ]);
    record(journal, 'OK', 'a', 'k', 'm', 'q', 1, 1, undefined, false);
    const second = journal.takeUnpublished();
    expect(second.records).toEqual([]);
    expect(second.trends.map(({ status, count }) => [status, count])).toEqual([['OK', 1]]);
    expect(journal.takeUnpublished()).toEqual({ records: [], trends: [] });
  });

  it('keeps no record with recentPerType 0, and refuses nonsense', () => {
    const { journal } = journalAt({ recentPerType: 0 });
    record(journal, 'FAILED', 'a', 'k', 'm', 'q', 1, 1, new Error('x'), false);
    expect(journal.recent()).toEqual([]);
    expect(journal.trends()).toHaveLength(1);
    expect(() => new RecordJournal({ recentPerType: -1 })).toThrow(
      'recentPerType must be an integer from 0 to 10,000',
    );
    expect(() => new RecordJournal({ recentPerType: 1.5 })).toThrow(IdempotencyConfigurationError);
  });

  it('journals at most MAX_JOURNAL_TYPES types apart (a fallback takes types producers choose), the rest together', () => {
    const { journal } = journalAt();
    for (let i = 0; i < MAX_JOURNAL_TYPES + 50; i++) {
      record(journal, 'FAILED', `type-${i}`, 'k', `m${i}`, 'orders', 1, 1, new Error('x'), false);
    }
    const types = new Set(journal.trends().map((count) => count.eventType));
    expect(types.size).toBe(MAX_JOURNAL_TYPES + 1);
    expect(journal.trends().find((count) => count.eventType === OTHER_EVENT_TYPES)?.count).toBe(50);
    // Each record keeps the type it named; those journaled together share one ring.
    expect(
      journal.recent().filter((kept) => Number(kept.eventType.slice(5)) >= MAX_JOURNAL_TYPES),
    ).toHaveLength(20);
    expect(journal.recent()[0].eventType).toBe(`type-${MAX_JOURNAL_TYPES + 49}`);
  });
});
