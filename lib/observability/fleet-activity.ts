import { CLAIMS_INDEX, ClaimLatencySummary } from './claim-latency';
import type { Counters } from '../idempotency/idempotency-counters';
import type { MinuteDelta } from './minute-series';
import { RECORD_STATUSES } from '../idempotency/record-outcome';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import type { RecentRecord, TrendCount, UnroutedEventType } from './record-journal';

/**
 * What instances share through a stats store besides counters, so any instance's Center shows the
 * fleet: written by the background flush, bounded, expiring within the hour.
 */

/** One instance, as it describes itself at every flush. */
export interface InstanceHeartbeat {
  /** `<host>/<pid>/<random>`: unique per process and app (several apps may share a process). */
  id: string;
  host: string;
  pid: number;
  /** The app's service identity (`service` of `IdempotencyModule`), when it has one. */
  service?: string;
  /** ISO 8601. */
  startedAt: string;
  /** When it last reported (ISO 8601). */
  seenAt: string;
  /** Its counters since it started (all event types and handlers). */
  counters: Counters;
  /** How fast its store answered claims over the last minutes. */
  claims: ClaimLatencySummary;
  /** The event types its messages named that no handler routes. */
  unrouted: UnroutedEventType[];
}

/** What an instance shares at one flush. */
export interface ActivityReport {
  instance: InstanceHeartbeat;
  /** Recent records not shared yet, oldest first, each with `instance` set. */
  records: RecentRecord[];
  /** Per-minute record counts since the last report (increments, not totals). */
  trends: TrendCount[];
  /** Per-minute claim histogram increments (`index` a latency bucket, or `LATENCY_BUCKETS` for failures). */
  claims: MinuteDelta[];
}

/** The fleet's shared activity, as a stats store reads it back. */
export interface FleetActivity {
  /** Instances that reported within the last hour, most recently seen first (at most `MAX_INSTANCES_READ`). */
  instances: InstanceHeartbeat[];
  /** Recent records of every instance, newest first (the store's cap). */
  records: RecentRecord[];
  /** Per-minute record counts of the last hour, summed over the fleet. */
  trends: TrendCount[];
  /** Per-minute claim latency histograms of the last hour, summed over the fleet (see `ActivityReport.claims`). */
  claims: Array<{ minute: number; counts: number[] }>;
}

/** How long shared activity is kept: the trend charts' hour, and a margin. */
export const ACTIVITY_RETENTION_MS = 65 * 60_000;

/** The instances the Center reads per request: the most recently seen. */
export const MAX_INSTANCES_READ = 1_000;
const MAX_RECENT_LIMIT = 10_000;

/** A stats store's `recentLimit` (default 1,000), or the configuration error naming it, its bounds and the value. */
export function checkRecentLimit(recentLimit: number | undefined, where: string): number {
  const limit = recentLimit ?? 1_000;
  if (Number.isInteger(limit) && limit >= 1 && limit <= MAX_RECENT_LIMIT) return limit;
  throw new IdempotencyConfigurationError(
    `${where}: recentLimit must be an integer from 1 to 10,000 (the recent records of each kind kept, which the ` +
      `Center reads per request), got ${String(recentLimit)}.`,
  );
}

/**
 * A report's per-minute increments as `[minute, field, count]`, the field `<event type>\t<status>` or
 * `\tclaim\t<index>` (no event type is empty).
 */
export function minuteIncrementsOf(report: ActivityReport): Array<[number, string, number]> {
  const increments: Array<[number, string, number]> = [];
  for (const { minute, eventType, status, count } of report.trends)
    increments.push([minute, `${eventType}\t${status}`, count]);
  for (const { minute, index, count } of report.claims) increments.push([minute, `\tclaim\t${index}`, count]);
  return increments;
}

/** The fleet's activity from what a stats store kept: instances and records newest first, minutes oldest first. */
export function fleetActivityOf(
  instances: InstanceHeartbeat[],
  records: RecentRecord[],
  minutes: Iterable<[minute: number, fields: Iterable<[string, number | string]>]>,
): FleetActivity {
  const trends: FleetActivity['trends'] = [];
  const claims: FleetActivity['claims'] = [];
  for (const [minute, fields] of minutes) {
    let counts: number[] | undefined;
    // Each field as `minuteIncrementsOf` wrote it, its count a number or Redis's text; a malformed one is
    // skipped, and so is a claim index past the histogram's (a foreign `\tclaim\t4000000000` would size it).
    for (const [field, value] of fields) {
      const count = Number(value);
      if (!(Number.isSafeInteger(count) && count > 0)) continue;
      if (field.startsWith('\tclaim\t')) {
        const text = field.slice(7);
        const index = Number(text);
        if (Number.isInteger(index) && index >= 0 && index <= CLAIMS_INDEX && text === String(index)) {
          counts ??= [];
          counts[index] = (counts[index] ?? 0) + count;
        }
        continue;
      }
      const tab = field.lastIndexOf('\t');
      const status = field.slice(tab + 1) as TrendCount['status'];
      if (tab > 0 && RECORD_STATUS_SET.has(status))
        trends.push({ minute, eventType: field.slice(0, tab), status, count });
    }
    if (counts) claims.push({ minute, counts: Array.from(counts, (count) => count ?? 0) });
  }
  return {
    instances: instances.sort((a, b) => b.seenAt.localeCompare(a.seenAt)).slice(0, MAX_INSTANCES_READ),
    records: records.sort((a, b) => b.at.localeCompare(a.at)),
    trends,
    claims,
  };
}

const RECORD_STATUS_SET: ReadonlySet<string> = new Set(RECORD_STATUSES);
