import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit, Optional } from '@nestjs/common';
import { IDEMPOTENCY_MODULE_OPTIONS } from '../idempotency/idempotency.constants';
import type { ResolvedIdempotencyOptions } from '../idempotency/idempotency-options.interface';
import type { IdempotencyOutcome } from '../idempotency/idempotency-state';
import type { IdempotencyPolicy } from '../idempotency/idempotency-policy';
import type { ClaimEvent, RecordObserver } from '../idempotency/record-observer';
import { counterOfStatus, SqsRecordResult, SqsRecordStatus } from '../idempotency/record-outcome';
import { ClaimLatency, ClaimLatencySummary, summarizeClaims } from './claim-latency';
import type { ActivityReport, InstanceHeartbeat } from './fleet-activity';
import { addCounters, CounterName, Counters, emptyCounters } from '../idempotency/idempotency-counters';
import { IdempotencyMetrics } from './idempotency-metrics';
import type { IdempotencyStatsOptions, IdempotencyStatsStore } from './idempotency-stats-store.interface';
import { IDEMPOTENCY_STATS_OPTIONS, STATS_FIELD_SEPARATOR } from './idempotency-stats-store.interface';
import { RecordJournal } from './record-journal';

/** The status a claim event's metric carries. */
const CLAIM_EVENT_STATUS: Record<ClaimEvent, string> = {
  leases_lost: 'LEASE_LOST',
  completions_lost: 'COMPLETION_LOST',
  fingerprint_mismatches: 'FINGERPRINT_MISMATCH',
  store_errors: 'STORE_ERROR',
};

/** The window of the claim latency the Center shows. */
export const CLAIM_WINDOW_MINUTES = 5;

/** Counters per event type, then per handler. */
export type CountersByType = ReadonlyMap<string, ReadonlyMap<string, Counters>>;

/**
 * The Center's hot path and the `RecordObserver`: every record counted per event type, handler and
 * counter, with the recent records (`journal`) and claim times (`claims`). A shared stats store gets
 * them from a background flush, never from a message's path.
 */
@Injectable()
export class RecordCounters implements RecordObserver, OnModuleInit, OnApplicationShutdown {
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
  private readonly metrics: IdempotencyMetrics;
  private readonly instance = describeThisInstance();
  /** Activity a failed report did not deliver, sent again with the next one. */
  private undelivered: Omit<ActivityReport, 'instance'> = { records: [], trends: [], claims: [] };
  private reportFailing = false;
  private flushTimer: ReturnType<typeof setInterval> | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    @Optional() @Inject(IDEMPOTENCY_STATS_OPTIONS) options: IdempotencyStatsOptions = {},
    @Optional()
    @Inject(IDEMPOTENCY_MODULE_OPTIONS)
    private readonly moduleOptions?: ResolvedIdempotencyOptions,
  ) {
    this.metrics = new IdempotencyMetrics(options.meterProvider);
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

  /** Loads the optional OpenTelemetry API before the first message. */
  onModuleInit(): Promise<void> {
    return this.metrics.load();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.flushTimer) clearInterval(this.flushTimer);
    await this.flush();
  }

  /** The service segment of this app's store keys; absent when its keys carry none. */
  get service(): string | undefined {
    return this.moduleOptions?.identity.service;
  }

  countCall(
    eventType: string,
    handler: string,
    status: SqsRecordStatus,
    outcome: IdempotencyOutcome | undefined,
    durationMs: number,
  ): void {
    const counter = counterOfStatus(status);
    this.increment(eventType, handler, counter);
    this.metrics.add(counter, eventType, handler, status, durationMs);
    if (outcome === 'KEYLESS' || outcome === 'UNCLAIMED') {
      this.increment(eventType, handler, 'keyless');
      this.metrics.add('keyless', eventType, handler, status);
    }
  }

  countClaimEvent(policy: IdempotencyPolicy, event: ClaimEvent): void {
    this.increment(policy.eventType, policy.handlerName, event);
    this.metrics.add(event, policy.eventType, policy.handlerName, CLAIM_EVENT_STATUS[event]);
  }

  recordEnded(queue: string, result: SqsRecordResult, receiveCount: number, keyHashed: boolean): void {
    this.journal?.record(queue, result, receiveCount, keyHashed);
  }

  claimStarted(): number {
    return this.claims ? this.claims.start() : -1;
  }

  claimAnswered(mark: number): void {
    this.claims?.answered(mark);
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
