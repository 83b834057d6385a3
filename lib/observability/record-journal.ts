import { InvalidSqsMessageError } from '../sqs/sqs-message.errors';
import {
  needsAttention,
  RECORD_STATUSES,
  SqsRecordResult,
  SqsRecordStatus,
} from '../idempotency/record-outcome';
import { UNKNOWN_EVENT_TYPE } from '../idempotency/record-observer';
import { hashKeyForDisplay } from '../idempotency/idempotency-key';
import { epochMinuteOf, MinuteDelta, MinuteSeries } from './minute-series';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';

/**
 * Recent traffic, kept in this process for the Center: per event type the minute counts of the last
 * hour, the last failures and, in a ring apart, the last duplicates and skips, and the unrouted
 * types. Fed once per record, allocating nothing for an `OK` one; everything is bounded.
 */

const STATUS_INDEX = Object.fromEntries(RECORD_STATUSES.map((status, index) => [status, index])) as Record<
  SqsRecordStatus,
  number
>;

const DEFAULT_RECENT_PER_TYPE = 20;
/**
 * Event types journaled apart; a fallback handler's records carry the types their producers chose, so any
 * beyond are journaled together, under `OTHER_EVENT_TYPES`.
 */
export const MAX_JOURNAL_TYPES = 200;
export const OTHER_EVENT_TYPES = '(other types)';
/** Unrouted types remembered, and the length each is cut to: producers choose them. */
const MAX_UNROUTED_TYPES = 50;
const MAX_TYPE_LENGTH = 200;
const MAX_REASON_LENGTH = 500;

/** One record that was not a plain success, as the Center shows it and the fleet shares it. */
export interface RecentRecord {
  /** When the record ended (ISO 8601). */
  at: string;
  status: SqsRecordStatus;
  /** The type it was routed to, else the type it named (`routed` false), else `(unknown)`. */
  eventType: string;
  /** False when no handler of the app handles `eventType`. */
  routed: boolean;
  /** Its idempotency key, or `h:<hash>` of it when `keyHashed` (`hashKeys`); absent before a key was read. */
  key?: string;
  /** `key` is a hash of the key (`hashKeys`), not the key. */
  keyHashed?: boolean;
  messageId?: string;
  queue?: string;
  /** SQS's ApproximateReceiveCount (1 when missing or not a positive number, as `ctx.receiveCount`). */
  receiveCount: number;
  durationMs: number;
  /** Why it failed, was skipped or is invalid (the error's message, cut to 500 characters). */
  reason?: string;
  /** The instance that handled it (fleet records). */
  instance?: string;
  /** The trace of its span, when it was traced and sampled in (docs/tracing.md). */
  traceId?: string;
}

/** Records of one status in one minute for one event type. */
export interface TrendCount {
  /** Epoch minute (`Math.floor(epochMs / 60_000)`). */
  minute: number;
  eventType: string;
  status: SqsRecordStatus;
  count: number;
}

/** An event type that messages named and no handler routes. */
export interface UnroutedEventType {
  eventType: string;
  /** Records that named it (since this process started, or over the fleet's instances). */
  count: number;
  /** ISO 8601. */
  lastSeenAt: string;
}

interface RecordJournalOptions {
  /** Recent failures, and apart recent duplicates and skips, kept per event type. Default 20 each. */
  recentPerType?: number;
  /** Epoch-milliseconds clock (tests). Default `Date.now`. */
  clock?: () => number;
}

/** A record worth showing, as kept: numbered in arrival order, its time in epoch ms until it is shown. */
type Kept = Omit<RecentRecord, 'at'> & { seq: number; at: number };

interface TypeJournal {
  readonly series: MinuteSeries;
  /** Its last FAILED and INVALID records, oldest first (`recentPerType` at most). */
  readonly failures: Kept[];
  /** Its last DUPLICATE, IN_PROGRESS and SKIPPED records, oldest first. */
  readonly repeats: Kept[];
}

export class RecordJournal {
  private readonly types = new Map<string, TypeJournal>();
  private readonly unroutedTypes = new Map<string, { count: number; lastSeenAt: number }>();
  private readonly recentPerType: number;
  /** Epoch-ms clock, read once per record. */
  private readonly clock: () => number;
  private seq = 0;
  private publishedSeq = 0;

  constructor(options: RecordJournalOptions = {}) {
    const perType = options.recentPerType ?? DEFAULT_RECENT_PER_TYPE;
    if (!(Number.isInteger(perType) && perType >= 0 && perType <= 10_000)) {
      throw new IdempotencyConfigurationError(
        'IdempotencyModule options: stats.activity.recentPerType must be an integer from 0 to 10,000 (the recent ' +
          `records of each kind kept per event type, which the Center reads per request), got ${String(options.recentPerType)}.`,
      );
    }
    this.recentPerType = perType;
    this.clock = options.clock ?? Date.now;
  }

  /** One finished record, as the SQS hosts log it (`hashKeys`: keep a hash of its key, not the key). */
  record(queue: string, result: SqsRecordResult, receiveCount: number, hashKeys: boolean): void {
    const { status, eventType, key, error } = result;
    const journal = this.journalOf(eventType ?? UNKNOWN_EVENT_TYPE);
    const now = this.clock();
    journal.series.add(epochMinuteOf(now), STATUS_INDEX[status]);
    if (status === 'OK' || this.recentPerType === 0) return;
    let shownType = eventType;
    const unrouted = error instanceof InvalidSqsMessageError ? error.unroutedEventType : undefined;
    if (shownType === undefined && unrouted !== undefined) shownType = this.noteUnrouted(unrouted, now);
    // One object per record worth showing (an OK record, the common case, allocates nothing).
    const kept: Kept = {
      seq: ++this.seq,
      at: now,
      status,
      eventType: shownType ?? UNKNOWN_EVENT_TYPE,
      routed: eventType !== undefined,
      receiveCount,
      durationMs: Math.round(result.durationMs * 10) / 10,
    };
    if (key !== undefined) kept.key = hashKeys ? hashKeyForDisplay(key) : key;
    if (key !== undefined && hashKeys) kept.keyHashed = true;
    if (result.messageId) kept.messageId = result.messageId;
    if (queue) kept.queue = queue;
    if (error !== undefined) kept.reason = reasonOf(error);
    if (result.traceId !== undefined) kept.traceId = result.traceId;
    const ring = needsAttention(status) ? journal.failures : journal.repeats;
    ring.push(kept);
    if (ring.length > this.recentPerType) ring.shift();
  }

  /** Recent records, newest first: at most `perKind` failures, and as many duplicates and skips. */
  recent(perKind = Infinity): RecentRecord[] {
    const newest = (kind: 'failures' | 'repeats') =>
      [...this.types.values()]
        .flatMap((journal) => journal[kind])
        .sort(newestFirst)
        .slice(0, perKind);
    return [...newest('failures'), ...newest('repeats')].sort(newestFirst).map(toRecentRecord);
  }

  /** Per-minute counts of the last hour, non-zero only. */
  trends(): TrendCount[] {
    const now = this.clock();
    const counts: TrendCount[] = [];
    for (const [eventType, journal] of this.types) {
      for (const { minute, counts: perStatus } of journal.series.window(now)) {
        perStatus.forEach((count, index) => {
          if (count > 0) counts.push(trendOf(eventType, { minute, index, count }));
        });
      }
    }
    return counts;
  }

  /** The types messages named that no handler routes, most recently seen first. */
  unrouted(): UnroutedEventType[] {
    return [...this.unroutedTypes]
      .sort(([, a], [, b]) => b.lastSeenAt - a.lastSeenAt)
      .map(([eventType, { count, lastSeenAt }]) => ({
        eventType,
        count,
        lastSeenAt: new Date(lastSeenAt).toISOString(),
      }));
  }

  /** What is new since the last call, oldest first, for a shared stats store (records a ring overwrote are gone). */
  takeUnpublished(): { records: RecentRecord[]; trends: TrendCount[] } {
    const published = this.publishedSeq;
    this.publishedSeq = this.seq;
    const records = [...this.types.values()]
      .flatMap(({ failures, repeats }) => [...failures, ...repeats])
      .filter((record) => record.seq > published)
      .sort((a, b) => a.seq - b.seq);
    const now = this.clock();
    const trends: TrendCount[] = [];
    for (const [eventType, journal] of this.types) {
      for (const delta of journal.series.takeDeltas(now)) trends.push(trendOf(eventType, delta));
    }
    return { records: records.map(toRecentRecord), trends };
  }

  private journalOf(eventType: string): TypeJournal {
    let journal = this.types.get(eventType);
    if (journal !== undefined) return journal;
    if (this.types.size >= MAX_JOURNAL_TYPES && eventType !== OTHER_EVENT_TYPES) {
      return this.journalOf(OTHER_EVENT_TYPES);
    }
    journal = { series: new MinuteSeries(RECORD_STATUSES.length), failures: [], repeats: [] };
    this.types.set(eventType, journal);
    return journal;
  }

  /** Notes the type an unroutable message named; returns it (cut) for the record's `eventType`. */
  private noteUnrouted(named: string, now: number): string {
    const type = named.length > MAX_TYPE_LENGTH ? `${named.slice(0, MAX_TYPE_LENGTH)}…` : named;
    const seen = this.unroutedTypes.get(type);
    if (seen) {
      seen.count++;
      seen.lastSeenAt = now;
      return type;
    }
    if (this.unroutedTypes.size >= MAX_UNROUTED_TYPES) {
      const [stalest] = [...this.unroutedTypes].reduce((oldest, entry) =>
        entry[1].lastSeenAt < oldest[1].lastSeenAt ? entry : oldest,
      );
      this.unroutedTypes.delete(stalest);
    }
    this.unroutedTypes.set(type, { count: 1, lastSeenAt: now });
    return type;
  }
}

function reasonOf(error: Error): string {
  const message = typeof error?.message === 'string' ? error.message : String(error);
  return message.length > MAX_REASON_LENGTH ? `${message.slice(0, MAX_REASON_LENGTH)}…` : message;
}

function newestFirst(a: Kept, b: Kept): number {
  return b.seq - a.seq;
}

function toRecentRecord({ seq: _seq, at, ...shown }: Kept): RecentRecord {
  return { at: new Date(at).toISOString(), ...shown };
}

function trendOf(eventType: string, { minute, index, count }: MinuteDelta): TrendCount {
  return { minute, eventType, status: RECORD_STATUSES[index], count };
}
