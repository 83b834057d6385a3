import { HttpException, Inject, Injectable, Optional } from '@nestjs/common';
import { answerWithin } from '../common/answer-within';
import { IDEMPOTENCY_CENTER_OPTIONS } from './idempotency-center-options.interface';
import { IdempotentHandlerRegistry } from '../idempotency/idempotent-handler.registry';
import { IdempotencyStats } from '../observability/idempotency-stats.service';
import type { IdempotencyActivitySnapshot } from '../observability/idempotency-stats.service';
import { emptyCounters } from '../idempotency/idempotency-counters';
import { UNKNOWN_EVENT_TYPE } from '../idempotency/record-observer';
import { hashKeyForDisplay, toIdempotencyKey } from '../idempotency/idempotency-key';
import { IdempotencyPolicy, storeKeyFor } from '../idempotency/idempotency-policy';
import { inspectIn } from '../idempotency/store-calls';
import type { RecentRecord } from '../observability/record-journal';
import { needsAttention } from '../idempotency/record-outcome';
import { IdempotencyStore, isSharedStore } from '../stores/idempotency-store.interface';
import type {
  CenterEventType,
  CenterKeyLookup,
  CenterKeyState,
  CenterOverview,
  CenterRecords,
  CenterTrend,
} from './idempotency-center.api';
import { TREND_SERIES, TREND_SERIES_OF_STATUS } from './idempotency-center.api';
import type { ResolvedCenterOptions } from './idempotency-center-options.interface';

/** Recent records shown per event type on the page and in the overview. */
const RECENT_PER_TYPE_SHOWN = 20;
/** Longest key the lookup accepts as typed (longer keys are claimed as their digest anyway). */
const MAX_LOOKUP_KEY_LENGTH = 10_000;

/** Filters of `records()`. */
export interface CenterRecordsQuery {
  eventType?: string;
  status?: string;
  /** A key (matched as it is, or by its hash). */
  key?: string;
  /** 1 to 1,000 (the controller refuses others). Default 100. */
  limit?: number;
}

/** What the Center shows, for the page and the API alike; read-only (a lookup asks the store's `inspect`). */
@Injectable()
export class IdempotencyCenterService {
  constructor(
    private readonly stats: IdempotencyStats,
    @Inject(IDEMPOTENCY_CENTER_OPTIONS) private readonly options: ResolvedCenterOptions,
    @Optional() private readonly registry?: IdempotentHandlerRegistry,
    @Optional() @Inject(IdempotencyStore) private readonly store?: IdempotencyStore,
  ) {}

  async overview(): Promise<CenterOverview> {
    const failures: string[] = [];
    const snapshot = await this.orThisInstance((scope) => this.stats.snapshot(scope), failures);
    // It reads no more records than it can show: RECENT_PER_TYPE_SHOWN of each kind per type, and unrouted.
    const shown = RECENT_PER_TYPE_SHOWN * (snapshot.eventTypes.length + 1);
    const activity = await this.orThisInstance((scope) => this.stats.activity(scope, shown), failures);
    const now = Date.now();
    const trends = trendsByType(activity, now);
    // Per type, up to RECENT_PER_TYPE_SHOWN failures and as many duplicates and skips, newest first.
    const recentByType = new Map<string, RecentRecord[]>();
    const shownCount = new Map<string, number>();
    for (const record of activity.records) {
      const type = record.routed ? record.eventType : UNKNOWN_EVENT_TYPE;
      const kind = `${type}\t${needsAttention(record.status)}`;
      const count = shownCount.get(kind) ?? 0;
      if (count >= RECENT_PER_TYPE_SHOWN) continue;
      shownCount.set(kind, count + 1);
      let list = recentByType.get(type);
      if (list === undefined) recentByType.set(type, (list = []));
      list.push(this.shown(record));
    }
    const eventTypes: CenterEventType[] = snapshot.eventTypes.map((type) => ({
      ...type,
      trend: trends.get(type.eventType) ?? emptyTrend(now),
      recent: recentByType.get(type.eventType) ?? [],
    }));
    // A type seen in the trends only (counted by another instance's handlers) still gets its section.
    for (const [eventType, trend] of trends) {
      if (eventTypes.some((type) => type.eventType === eventType)) continue;
      eventTypes.push({
        eventType,
        covered: false,
        handlers: [],
        totals: emptyCounters(),
        duplicateRate: 0,
        trend,
        recent: recentByType.get(eventType) ?? [],
      });
    }
    const lastHour = Object.fromEntries(
      TREND_SERIES.map((series) => [series, sum(eventTypes.map(({ trend }) => sum(trend[series])))]),
    ) as CenterOverview['lastHour'];
    const store = this.store;
    return {
      apiVersion: 1,
      generatedAt: new Date(now).toISOString(),
      ...(snapshot.service === undefined ? {} : { service: snapshot.service }),
      ...(failures.length === 0 ? {} : { fleetError: failures[0] }),
      countersScope: snapshot.scope,
      activityScope: activity.scope,
      activityEnabled: activity.enabled,
      hashKeys: this.options.hashKeys,
      store: {
        kind: snapshot.store,
        shared: store ? isSharedStore(store) : false,
        lookup: typeof store?.inspect === 'function',
        warnings: snapshot.storeWarnings,
        claims: activity.claims,
        storeErrors: snapshot.totals.store_errors,
        leasesLost: snapshot.totals.leases_lost,
        completionsLost: snapshot.totals.completions_lost,
      },
      totals: snapshot.totals,
      lastHour,
      eventTypes,
      unrouted: activity.unrouted,
      instances: activity.instances,
    };
  }

  /** Recent records, newest first, filtered. */
  async records(query: CenterRecordsQuery = {}): Promise<CenterRecords> {
    const failures: string[] = [];
    const activity = await this.orThisInstance((scope) => this.stats.activity(scope), failures);
    const limit = query.limit ?? 100;
    const matchesKey = query.key === undefined ? undefined : keyMatcher(query.key);
    const records = activity.records
      .filter(
        (record) =>
          (query.eventType === undefined || record.eventType === query.eventType) &&
          (query.status === undefined || record.status === query.status) &&
          (matchesKey === undefined || matchesKey(record)),
      )
      .slice(0, limit)
      .map((record) => this.shown(record));
    return {
      apiVersion: 1,
      scope: activity.scope,
      ...(failures.length === 0 ? {} : { fleetError: failures[0] }),
      records,
    };
  }

  /**
   * What happened to `key`, typed as logs show it: the store entry each idempotent handler's claim would
   * write (named by the claim's own functions) and the recent records that carried it. A lookup that
   * cannot be answered as asked throws the API's 400 or 404, whose message the page shows.
   */
  async lookup(eventType: string, key: string): Promise<CenterKeyLookup> {
    if (eventType === '') throw refusal('Name the event type (eventType) whose key to look up.', 400);
    if (key === '' || key.length > MAX_LOOKUP_KEY_LENGTH) {
      throw refusal(`Give the key to look up (key), 1 to ${MAX_LOOKUP_KEY_LENGTH} characters.`, 400);
    }
    const policies = (this.registry?.policies() ?? []).filter((policy) => policy.eventType === eventType);
    if (policies.length === 0) {
      const known = this.lookupTypes().map((type) => JSON.stringify(type));
      throw refusal(
        `No @Idempotent() handler of event type ${JSON.stringify(eventType)} in this app, so no key of it is ` +
          `claimed here (idempotent types: ${known.join(', ') || 'none'}).`,
        404,
      );
    }
    // The text as the payload's id (the key its claim stored), else as a stored key itself: a producer's id
    // may read like a hashed key (`sha256:...`), which the claim hashes again.
    const [asId, asStored] = claimedKeysOf(key);
    const handlers = await Promise.all(
      policies.map(async (policy) => {
        const found = await this.keyState(policy, asId);
        if (found.state !== 'UNKNOWN' || asStored === undefined) return found;
        const stored = await this.keyState(policy, asStored);
        return stored.state === 'UNKNOWN' ? found : stored;
      }),
    );
    const { records } = await this.records({ key, limit: RECENT_PER_TYPE_SHOWN });
    return {
      apiVersion: 1,
      eventType,
      key: this.options.hashKeys ? hashKeyForDisplay(key) : key,
      handlers,
      records,
    };
  }

  /** The event types with an idempotent handler, sorted (the page's lookup form offers them). */
  lookupTypes(): string[] {
    return [...new Set((this.registry?.policies() ?? []).map((policy) => policy.eventType))].sort();
  }

  /** A handler's store entry for a claimed key, read by the store's `inspect` (guarded: any failure is `ERROR`). */
  private async keyState(policy: IdempotencyPolicy, key: string): Promise<CenterKeyState> {
    const storeKey = storeKeyFor(policy, key);
    const state: CenterKeyState = {
      handler: policy.handlerName,
      scope: policy.scope,
      ...(this.options.hashKeys ? {} : { storeKey }),
      state: 'NOT_SUPPORTED',
    };
    const store = this.store;
    if (store === undefined || typeof store.inspect !== 'function') return state;
    try {
      const answer = inspectIn(store, storeKey);
      return {
        ...state,
        ...(await answerWithin(answer, this.options.lookupTimeoutMs, 'the store did not answer')),
      };
    } catch (error) {
      return { ...state, state: 'ERROR', error: error instanceof Error ? error.message : String(error) };
    }
  }

  /** The fleet's view, else this instance's when the stats store is down (noted on the page). */
  private async orThisInstance<T>(read: (scope?: 'instance') => Promise<T>, failures: string[]): Promise<T> {
    try {
      return await read();
    } catch (error) {
      failures.push(
        `the shared stats store could not be read (${error instanceof Error ? error.message : String(error)}): ` +
          'this shows this instance only',
      );
      return read('instance');
    }
  }

  /** A record as the Center shows it: its key hashed when `hashKeys` says so. */
  private shown(record: RecentRecord): RecentRecord {
    if (!this.options.hashKeys || record.key === undefined || record.keyHashed) return record;
    return { ...record, key: hashKeyForDisplay(record.key), keyHashed: true };
  }
}

/** A lookup that cannot be answered as asked: the API answers with it, the page shows its message. */
function refusal(message: string, status: 400 | 404): HttpException {
  return new HttpException({ statusCode: status, apiVersion: 1, message }, status);
}

/**
 * The keys a claim may have stored for `text`: the key of a payload id reading `text`, and `text` itself
 * when it differs and has the form of a stored key (a key the claim hashed: `sha256:` and 64 hex digits).
 */
function claimedKeysOf(text: string): [string, string?] {
  const asId = toIdempotencyKey(text) ?? text;
  return asId !== text && STORED_DIGEST.test(text) ? [asId, text] : [asId];
}
const STORED_DIGEST = /^sha256:[0-9a-f]{64}$/;

/** A record carries `key` when it holds a key `claimedKeysOf` gives, or its hash (journaled so with `hashKeys`). */
function keyMatcher(key: string): (record: RecentRecord) => boolean {
  const keys = claimedKeysOf(key);
  const hashed = keys.map((claimed) => hashKeyForDisplay(claimed!));
  return (record) => record.key !== undefined && (record.keyHashed ? hashed : keys).includes(record.key);
}

/** The last hour of per-minute counts, per event type, as 60-value series. */
function trendsByType(activity: IdempotencyActivitySnapshot, now: number): Map<string, CenterTrend> {
  const newest = Math.floor(now / 60_000);
  const trends = new Map<string, CenterTrend>();
  for (const { minute, eventType, status, count } of activity.trends) {
    const offset = minute - (newest - 59);
    if (offset < 0 || offset > 59) continue;
    let trend = trends.get(eventType);
    if (trend === undefined) trends.set(eventType, (trend = emptyTrend(now)));
    trend[TREND_SERIES_OF_STATUS[status]][offset] += count;
  }
  return trends;
}

function emptyTrend(now: number): CenterTrend {
  const from = new Date((Math.floor(now / 60_000) - 59) * 60_000).toISOString();
  return Object.assign(
    { from },
    ...TREND_SERIES.map((series) => ({ [series]: new Array<number>(60).fill(0) })),
  );
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
