import {
  ACTIVITY_RETENTION_MS,
  ActivityReport,
  checkRecentLimit,
  FleetActivity,
  fleetActivityOf,
  InstanceHeartbeat,
  minuteIncrementsOf,
} from './fleet-activity';
import type { IdempotencyStatsStore } from './idempotency-stats-store.interface';
import { needsAttention } from '../idempotency/record-outcome';
import type { RecentRecord } from './record-journal';

/** Fleet counters and activity for app instances in one process (tests, demos): give each the same object. */
export class InMemoryIdempotencyStatsStore implements IdempotencyStatsStore {
  private readonly totals = new Map<string, number>();
  /** Recent failures, and apart duplicates and skips, oldest first (each capped at `recentLimit`). */
  private readonly failures: RecentRecord[] = [];
  private readonly repeats: RecentRecord[] = [];
  /** Epoch minute → `<event type>\t<status>` (or `claim\t<index>`) → count. */
  private readonly minutes = new Map<number, Map<string, number>>();
  private readonly instances = new Map<string, InstanceHeartbeat>();

  private readonly recentLimit: number;

  /** @param recentLimit recent failures, and as many duplicates and skips, kept for the whole fleet: 1 to 10,000 (default 1,000 each). */
  constructor(
    recentLimit?: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.recentLimit = checkRecentLimit(recentLimit, 'InMemoryIdempotencyStatsStore');
  }

  async add(increments: ReadonlyMap<string, number>): Promise<void> {
    for (const [field, delta] of increments) this.totals.set(field, (this.totals.get(field) ?? 0) + delta);
  }

  async read(): Promise<Record<string, number>> {
    return Object.fromEntries(this.totals);
  }

  async report(report: ActivityReport): Promise<void> {
    this.instances.set(report.instance.id, report.instance);
    for (const record of report.records)
      (needsAttention(record.status) ? this.failures : this.repeats).push(record);
    for (const list of [this.failures, this.repeats]) {
      if (list.length > this.recentLimit) list.splice(0, list.length - this.recentLimit);
    }
    for (const [minute, field, count] of minuteIncrementsOf(report)) {
      let fields = this.minutes.get(minute);
      if (fields === undefined) this.minutes.set(minute, (fields = new Map()));
      fields.set(field, (fields.get(field) ?? 0) + count);
    }
    this.prune();
  }

  async readActivity(recordsPerKind = this.recentLimit): Promise<FleetActivity> {
    this.prune();
    return fleetActivityOf(
      [...this.instances.values()],
      [...this.failures.slice(-recordsPerKind), ...this.repeats.slice(-recordsPerKind)],
      [...this.minutes].sort(([a], [b]) => a - b),
    );
  }

  /** Forgets minutes and instances older than the retention. */
  private prune(): void {
    const now = this.clock();
    const oldestMinute = Math.floor((now - ACTIVITY_RETENTION_MS) / 60_000);
    for (const minute of this.minutes.keys()) if (minute < oldestMinute) this.minutes.delete(minute);
    const oldestSeen = new Date(now - ACTIVITY_RETENTION_MS).toISOString();
    for (const [id, instance] of this.instances) if (instance.seenAt < oldestSeen) this.instances.delete(id);
  }
}
