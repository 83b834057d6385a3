import type { ClaimLatencySummary } from '../observability/claim-latency';
import type { Counters } from '../idempotency/idempotency-counters';
import type { EventTypeStats, IdempotencyActivitySnapshot } from '../observability/idempotency-stats.service';
import type { RecentRecord } from '../observability/record-journal';
import type { IdempotencyStoreWarning } from '../stores/idempotency-store.interface';

/** The series of a trend, by the record status each counts. */
export const TREND_SERIES_OF_STATUS = {
  OK: 'handled',
  /** Acked on purpose with a `SkipMessageException`. */
  SKIPPED: 'skipped',
  /** Duplicates of a completed event, acked without running. */
  DUPLICATE: 'duplicates',
  /** Duplicates of an event in flight, failed for redelivery. */
  IN_PROGRESS: 'inFlight',
  FAILED: 'failed',
  INVALID: 'invalid',
} as const;
export const TREND_SERIES = Object.values(TREND_SERIES_OF_STATUS);

/** Records per minute over the last hour for one event type, oldest minute first: 60 values per series. */
export type CenterTrend = Record<(typeof TREND_SERIES)[number], number[]> & {
  /** The first minute (ISO 8601); the last is the current minute. */
  from: string;
};

/** One event type on the Center: its handlers and counters (as `IdempotencyStats`), trend and recent records. */
export interface CenterEventType extends EventTypeStats {
  trend: CenterTrend;
  /** Its recent records that were not a plain success, newest first (20 failures, 20 duplicates and skips). */
  recent: RecentRecord[];
}

/** The store as the Center sees it. */
export interface CenterStoreHealth {
  /** The store's class, e.g. `RedisIdempotencyStore`. */
  kind: string;
  /** Whether other processes share its keys. */
  shared: boolean;
  /** Whether it answers the key lookup (`inspect`). */
  lookup: boolean;
  /** What it found risky about its backing service (eviction, persistence, a full in-memory store). */
  warnings: IdempotencyStoreWarning[];
  /** Claim latency and failed claims over the last minutes. */
  claims: ClaimLatencySummary;
  /** Store errors since the counters started (claims, completions, releases, lease renewals). */
  storeErrors: number;
  leasesLost: number;
  completionsLost: number;
}

/** `GET <path>/api/v1/overview`: everything the page shows (`unrouted` types' records are invalid). */
export interface CenterOverview extends Pick<IdempotencyActivitySnapshot, 'unrouted' | 'instances'> {
  /** Fields are only added within a version; a removal or change gets `/api/v2` beside it. */
  apiVersion: 1;
  generatedAt: string;
  /** The service segment of this app's store keys, when it has one. */
  service?: string;
  /** Why the fleet's view is missing: the shared stats store could not be read (this instance is shown). */
  fleetError?: string;
  /** `fleet` when counters come from a shared stats store. */
  countersScope: 'instance' | 'fleet';
  /** `fleet` when recent records, trends and instances come from a shared stats store. */
  activityScope: 'instance' | 'fleet';
  /** False with `stats: { activity: false }`: no trends, records, latency. */
  activityEnabled: boolean;
  /** Keys are shown as `h:<hash>` (`hashKeys`). */
  hashKeys: boolean;
  store: CenterStoreHealth;
  /** Counters of every event type and handler since they started. */
  totals: Counters;
  /** Records in the last hour, by outcome (the trends, added up). */
  lastHour: Record<keyof Omit<CenterTrend, 'from'>, number>;
  eventTypes: CenterEventType[];
}

/** `GET <path>/api/v1/records`: recent records, newest first. */
export interface CenterRecords {
  apiVersion: 1;
  scope: 'instance' | 'fleet';
  /** Why the fleet's records are missing (see `CenterOverview.fleetError`). */
  fleetError?: string;
  records: RecentRecord[];
}

/** What one idempotent handler's store entry says of a key. */
export interface CenterKeyState {
  handler: string;
  scope: string;
  /** The entry the claim writes (absent with `hashKeys`: it contains the key). */
  storeKey?: string;
  /** The store's answer (`UNKNOWN`: never seen, released or expired); `NOT_SUPPORTED` without `inspect`; `ERROR`. */
  state: 'COMPLETED' | 'IN_PROGRESS' | 'UNKNOWN' | 'NOT_SUPPORTED' | 'ERROR';
  /** Time left in the dedup window (`COMPLETED`; absent: kept forever). */
  expiresInMs?: number;
  /** Time left on the lease (`IN_PROGRESS`). */
  leaseLeftMs?: number;
  error?: string;
}

/** `GET <path>/api/v1/lookup?eventType=...&key=...`: what happened to one key. */
export interface CenterKeyLookup {
  apiVersion: 1;
  eventType: string;
  /** The key looked up (`h:<hash>` with `hashKeys`). */
  key: string;
  /** One entry per `@Idempotent()` handler of the event type (each claims in its own scope). */
  handlers: CenterKeyState[];
  /** Recent records that carried the key (or its hash), newest first. */
  records: RecentRecord[];
}
