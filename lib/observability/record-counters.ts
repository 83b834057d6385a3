import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Logger, OnApplicationShutdown } from '@nestjs/common';
import type { ResolvedIdempotencyOptions } from '../idempotency/idempotency-options.interface';
import type { IdempotencyOutcome } from '../idempotency/idempotency-state';
import type { IdempotencyPolicy } from '../idempotency/idempotency-policy';
import type { ClaimEvent, RecordObserver, RecordObservers } from '../idempotency/record-observer';
import { counterOfStatus, SqsRecordResult, SqsRecordStatus } from '../idempotency/record-outcome';
import { ClaimLatency, ClaimLatencySummary, summarizeClaims } from './claim-latency';
import type { ActivityReport, InstanceHeartbeat } from './fleet-activity';
import { addCounters, CounterName, Counters, emptyCounters } from '../idempotency/idempotency-counters';
import type { IdempotencyStatsOptions, IdempotencyStatsStore } from './idempotency-stats-store.interface';
import { STATS_FIELD_SEPARATOR } from './idempotency-stats-store.interface';
import { RecordJournal } from './record-journal';

/**
 * Installs the Center's counters among `observers` (where `stats` or the Center is configured), with
 * the module's `stats` options; `null` when they run already (so one provider holds them, and Nest
 * calls their shutdown hook once).
 */
export function installRecordCounters(
  observers: RecordObservers,
  stats: IdempotencyStatsOptions | null,
  moduleOptions: ResolvedIdempotencyOptions,
): RecordCounters | null {
  if (observers.find(RecordCounters)) return null;
  const counters = new RecordCounters(stats ?? {}, moduleOptions.identity.service);
  observers.add(counters);
  return counters;
}

/** The window of the claim latency the Center shows. */
export const CLAIM_WINDOW_MINUTES = 5;

/** Counters per event type, then per handler. */
export type CountersByType = ReadonlyMap<string, ReadonlyMap<string, Counters>>;

/**
 * The Center's hot path and the `RecordObserver`: every record counted per event type, handler and
 * counter, with the recent records (`journal`) and claim times (`claims`). A shared stats store gets
 * them from a background flush, never from a message's path.
 */
export class RecordCounters implements RecordObserver, OnApplicationShutdown {
  /** Recent records and per-minute counts; `undefined` with `stats.activity: false`. */
  readonly journal: RecordJournal | undefined;
  /** The store's claim times; `undefined` with `stats.activity: false`. */
  readonly claims: ClaimLatency | undefined;
  /** The shared stats store, if any. */
  readonly store: IdempotencyStatsStore | undefined;
  /** This instance's counters (live: read, never keep). */
  readonly counts = new Map<string, Map<string, Counters>>();
  // The context its warnings always had (apps filter their logs by it).
  private readonly logger = new Logger('IdempotencyStats');
  private readonly pending = new Map<string, number>();
  private readonly instance = describeThisInstance();
  /** Activity a failed report did not deliver, sent again with the next one. */
  private undelivered: Omit<ActivityReport, 'instance'> = { records: [], trends: [], claims: [] };
  private reportFailing = false;
  private flushTimer: ReturnType<typeof setInterval> | undefined;
  private flushing: Promise<void> | undefined;

  /** `service`: the service segment of this app's store keys (absent when its keys carry none). */
  constructor(
    options: IdempotencyStatsOptions,
    readonly service?: string,
  ) {
    // Checked with the module's options: false, or an object (or left out).
    const activity = options.activity;
    if (activity !== false) {
      this.journal = new RecordJournal({ recentPerType: activity?.recentPerType });
      this.claims = new ClaimLatency();
    }
    this.store = options.store;
    if (options.store) {
      this.flushTimer = setInterval(() => void this.flush(), options.flushIntervalMs ?? 1_000);
      this.flushTimer.unref?.();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.flushTimer) clearInterval(this.flushTimer);
    await this.flush();
  }

  countCall(
    eventType: string,
    handler: string,
    status: SqsRecordStatus,
    outcome: IdempotencyOutcome | undefined,
  ): void {
    this.increment(eventType, handler, counterOfStatus(status));
    if (outcome === 'KEYLESS' || outcome === 'UNCLAIMED') this.increment(eventType, handler, 'keyless');
  }

  countClaimEvent(policy: IdempotencyPolicy, event: ClaimEvent): void {
    this.increment(policy.eventType, policy.handlerName, event);
  }

  recordEnded(queue: string, result: SqsRecordResult, receiveCount: number, keyHashed: boolean): void {
    this.journal?.record(queue, result, receiveCount, keyHashed);
  }

  claimAnswered(durationMs: number): void {
    this.claims?.observe(durationMs);
  }

  claimFailed(): void {
    this.claims?.fail();
  }

  /** How fast the store answered claims over the Center's window (zeros with `stats.activity: false`). */
  claimSummary(): ClaimLatencySummary {
    return this.claims?.summary(CLAIM_WINDOW_MINUTES) ?? summarizeClaims([], CLAIM_WINDOW_MINUTES);
  }

  /** This instance as the Center lists it. */
  heartbeat(): InstanceHeartbeat {
    const counters = emptyCounters();
    for (const byHandler of this.counts.values())
      for (const values of byHandler.values()) addCounters(counters, values);
    const service = this.service;
    return {
      ...this.instance,
      ...(service === undefined ? {} : { service }),
      seenAt: new Date().toISOString(),
      counters,
      claims: this.claimSummary(),
      unrouted: this.journal?.unrouted() ?? [],
    };
  }

  /** Pushes pending increments, then this instance's activity, to the shared store; failures retried next time. */
  async flush(): Promise<void> {
    const store = this.store;
    if (!store) return;
    this.flushing ??= this.flushTo(store).finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async flushTo(store: IdempotencyStatsStore): Promise<void> {
    if (this.pending.size > 0) {
      const batch = new Map(this.pending);
      this.pending.clear();
      try {
        await store.add(batch);
      } catch (error) {
        for (const [field, delta] of batch) this.pending.set(field, (this.pending.get(field) ?? 0) + delta);
        this.logger.warn(
          `Could not share counters (${(error as Error)?.message}); retrying at the next flush.`,
        );
      }
    }
    if (this.journal && typeof store.report === 'function') await this.report(store);
  }

  /** Sends the heartbeat and the activity since the last report (and what a failed one left). */
  private async report(store: IdempotencyStatsStore): Promise<void> {
    const fresh = this.journal!.takeUnpublished();
    const report: ActivityReport = {
      instance: this.heartbeat(),
      records: [
        ...this.undelivered.records,
        ...fresh.records.map((record) => ({ ...record, instance: this.instance.id })),
      ],
      trends: [...this.undelivered.trends, ...fresh.trends],
      claims: [...this.undelivered.claims, ...this.claims!.takeDeltas()],
    };
    try {
      await store.report!(report);
      this.undelivered = { records: [], trends: [], claims: [] };
      this.reportFailing = false;
    } catch (error) {
      // Kept for the next report, within bounds: the oldest records go first.
      this.undelivered = {
        records: report.records.slice(-1_000),
        trends: report.trends.slice(-10_000),
        claims: report.claims.slice(-10_000),
      };
      if (!this.reportFailing) {
        this.logger.warn(
          `Could not share recent activity with the stats store (${(error as Error)?.message}); retrying at every flush.`,
        );
      }
      this.reportFailing = true;
    }
  }

  private increment(eventType: string, handler: string, counter: CounterName): void {
    entryIn(this.counts, eventType, handler, emptyCounters)[counter]++;
    if (this.store) {
      const field = eventType + STATS_FIELD_SEPARATOR + handler + STATS_FIELD_SEPARATOR + counter;
      this.pending.set(field, (this.pending.get(field) ?? 0) + 1);
    }
  }
}

/** The value of `inner` under `outer` in `byOuter`, added as `make()` when absent. */
export function entryIn<V>(
  byOuter: Map<string, Map<string, V>>,
  outer: string,
  inner: string,
  make: () => V,
): V {
  let byInner = byOuter.get(outer);
  if (byInner === undefined) byOuter.set(outer, (byInner = new Map()));
  let value = byInner.get(inner);
  if (value === undefined) byInner.set(inner, (value = make()));
  return value;
}

/** Several apps may run in one process (a worker pool, a demo): the random part of `id` tells them apart. */
function describeThisInstance(): Pick<InstanceHeartbeat, 'id' | 'host' | 'pid' | 'startedAt'> {
  let host = 'localhost';
  try {
    host = hostname() || host;
  } catch {
    // an unreadable host name leaves `localhost`
  }
  const id = `${host}/${process.pid}/${randomBytes(4).toString('hex')}`;
  return { id, host, pid: process.pid, startedAt: new Date().toISOString() };
}
