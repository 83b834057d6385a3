import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { IDEMPOTENCY_MODULE_OPTIONS, IDEMPOTENCY_STATS_OPTIONS } from '../constants';
import type { ResolvedIdempotencyOptions } from '../idempotency/idempotency-options.interface';
import type { IdempotencyOutcome } from '../idempotency/idempotency-state';
import type { IdempotencyPolicy } from '../idempotency/idempotency-policy';
import { IdempotentHandlerRegistry } from '../idempotency/idempotent-handler.registry';
import { SqsHandlerExplorer } from '../sqs/sqs-handler.explorer';
import { IdempotencyStore, IdempotencyStoreWarning } from '../stores/idempotency-store.interface';
import { counterOfStatus, SqsRecordStatus } from '../sqs/record-outcome';
import { COUNTER_NAMES, CounterName, Counters, emptyCounters, NO_HANDLER } from './idempotency-counters';
import { ClaimLatency, ClaimLatencySummary, summarizeClaims } from './claim-latency';
import type { ActivityReport, InstanceHeartbeat } from './fleet-activity';
import { IdempotencyMetrics } from './idempotency-metrics';
import type { IdempotencyStatsOptions, IdempotencyStatsStore } from './idempotency-stats-store.interface';
import { STATS_FIELD_SEPARATOR } from './idempotency-stats-store.interface';
import { InstanceIdentity, newInstanceIdentity } from './instance-identity';
import { RecentRecord, RecordJournal, TrendCount, UnroutedEventType } from './record-journal';

/** One handler of an event type, as the Idempotency Center shows it. */
export interface HandlerStats {
  handler: string;
  queue?: string;
  idempotent: boolean;
  /** `keyPath "id"` or `key()`. */
  keySource?: string;
  scope?: string;
  ttl?: number;
  inProgressTtl?: number;
  /** What its payload fingerprint hashes (`the event`, `fields orderId, amount`, `fingerprint()`), when it has one. */
  fingerprint?: string;
  counters: Counters;
}

/** One event type: its handlers, their counters and totals. */
export interface EventTypeStats {
  eventType: string;
  /** True when every handler of the type is idempotent. */
  covered: boolean;
  handlers: HandlerStats[];
  totals: Counters;
  /** Duplicates caught (completed and in flight) per delivery that reached a handler. */
  duplicateRate: number;
}

/** What `IdempotencyStats.snapshot()` returns (and the Center's endpoint serves). */
export interface IdempotencyStatsSnapshot {
  /** `fleet` when counters come from a shared store, `instance` for this process only. */
  scope: 'instance' | 'fleet';
  generatedAt: string;
  store: string;
  /** The service segment of this app's store keys; absent when its keys carry none. */
  service?: string;
  /** What the store found risky about its backing service (e.g. a Redis that evicts keys). */
  storeWarnings: IdempotencyStoreWarning[];
  eventTypes: EventTypeStats[];
  totals: Counters;
}

/**
 * What `IdempotencyStats.activity()` returns: what happened recently, of the fleet when the stats
 * store shares activity (`report` and `readActivity`), else of this instance.
 */
export interface IdempotencyActivitySnapshot {
  scope: 'instance' | 'fleet';
  /** False when `stats.activity` is `false`: nothing is recorded, every list is empty. */
  enabled: boolean;
  /** Recent records that were not a plain success, newest first. */
  records: RecentRecord[];
  /** Per-minute record counts of the last hour (non-zero only). */
  trends: TrendCount[];
  /** How fast the idempotency store answered claims over the last {@link CLAIM_WINDOW_MINUTES} minutes. */
  claims: ClaimLatencySummary;
  /** Instances that reported within the last hour (this one alone without a shared stats store). */
  instances: InstanceHeartbeat[];
  /** Event types that messages named and no handler routes. */
  unrouted: UnroutedEventType[];
}

/** The window of the claim latency the Center shows. */
export const CLAIM_WINDOW_MINUTES = 5;

export { NO_HANDLER, UNKNOWN_EVENT_TYPE } from './idempotency-counters';

/**
 * Counts what happened to every record, per event type and handler, and says which handlers are
 * covered by idempotency. Counting is synchronous and allocation-free on the per-message path;
 * with a shared store, increments are flushed in the background (one pipelined round trip per
 * interval), so the fleet's numbers never slow a message down.
 */
@Injectable()
export class IdempotencyStats implements OnModuleInit, OnApplicationShutdown {
  /**
   * Recent records and per-minute counts for the Center, fed once per finished record by the hosts
   * (where they log it) and by `@Idempotent()` for `@EventPattern()` calls. `undefined` with
   * `stats.activity: false`.
   */
  readonly journal: RecordJournal | undefined;
  /** The store's claim times, fed by the idempotency service; `undefined` with `stats.activity: false`. */
  readonly claims: ClaimLatency | undefined;
  private readonly logger = new Logger('IdempotencyStats');
  private readonly local = new Map<string, Map<string, Counters>>();
  private readonly pending = new Map<string, number>();
  private readonly metrics: IdempotencyMetrics;
  private readonly instance: InstanceIdentity = newInstanceIdentity();
  /** Activity a failed report did not deliver, sent again with the next one. */
  private undelivered: Omit<ActivityReport, 'instance'> = { records: [], trends: [], claims: [] };
  private reportFailing = false;
  private flushTimer: ReturnType<typeof setInterval> | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    @Optional() @Inject(IDEMPOTENCY_STATS_OPTIONS) private readonly options: IdempotencyStatsOptions = {},
    @Optional() private readonly moduleRef?: ModuleRef,
  ) {
    this.metrics = new IdempotencyMetrics(options.meterProvider);
    const activity = options.activity;
    if (activity !== false && activity !== undefined && (activity === null || typeof activity !== 'object')) {
      throw new TypeError(
        `stats.activity must be false or an object ({ recentPerType }), got ${JSON.stringify(activity)}.`,
      );
    }
    if (activity !== false) {
      this.journal = new RecordJournal({ recentPerType: activity?.recentPerType });
      this.claims = new ClaimLatency();
    }
    if (options.store) {
      this.flushTimer = setInterval(() => void this.flush(), options.flushIntervalMs ?? 1_000);
      this.flushTimer.unref?.();
    }
  }

  /** Loads the optional OpenTelemetry API before the first message. */
  onModuleInit(): Promise<void> {
    return this.metrics.load();
  }

  /** Counts one handler call (or an invalid record, with `handler` = `'-'`). */
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

  /** Counts a claim lost before it settled. */
  countLeaseLost(policy: IdempotencyPolicy): void {
    this.increment(policy.eventType, policy.handlerName, 'leases_lost');
    this.metrics.add('leases_lost', policy.eventType, policy.handlerName, 'LEASE_LOST');
  }

  /** Counts a completion the store failed to record after the handler succeeded (or skipped). */
  countCompletionLost(policy: IdempotencyPolicy): void {
    this.increment(policy.eventType, policy.handlerName, 'completions_lost');
    this.metrics.add('completions_lost', policy.eventType, policy.handlerName, 'COMPLETION_LOST');
  }

  /** Counts a record failed for a payload fingerprint other than the one its key's claim kept. */
  countFingerprintMismatch(policy: IdempotencyPolicy): void {
    this.increment(policy.eventType, policy.handlerName, 'fingerprint_mismatches');
    this.metrics.add('fingerprint_mismatches', policy.eventType, policy.handlerName, 'FINGERPRINT_MISMATCH');
  }

  /** Counts a store failure. */
  countStoreError(policy: IdempotencyPolicy): void {
    this.increment(policy.eventType, policy.handlerName, 'store_errors');
    this.metrics.add('store_errors', policy.eventType, policy.handlerName, 'STORE_ERROR');
  }

  /**
   * The counters and coverage, of the fleet when a shared store is configured (rejects when it
   * cannot be read); `'instance'`: of this instance only.
   */
  async snapshot(scope?: 'instance'): Promise<IdempotencyStatsSnapshot> {
    let counters = this.local;
    if (this.options.store && scope !== 'instance') {
      await this.flush();
      counters = parseFleet(await this.options.store.read());
      return this.assemble(counters, 'fleet');
    }
    return this.assemble(counters, 'instance');
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.flushTimer) clearInterval(this.flushTimer);
    await this.flush();
  }

  /**
   * Pushes pending increments to the shared store, then (when the store shares activity) this
   * instance's heartbeat, new recent records and per-minute increments; failures are logged and
   * retried next time.
   */
  async flush(): Promise<void> {
    const store = this.options.store;
    if (!store) return;
    if (this.flushing) return this.flushing;
    this.flushing = this.flushTo(store).finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /**
   * What happened recently (records, per-minute trends, claim latency, instances, unrouted types):
   * of the fleet when the stats store shares activity (rejects when it cannot be read), else, or
   * with `'instance'`, of this instance.
   */
  async activity(scope?: 'instance'): Promise<IdempotencyActivitySnapshot> {
    const enabled = this.journal !== undefined;
    const store = this.options.store;
    const shared = store && typeof store.report === 'function' && typeof store.readActivity === 'function';
    if (enabled && shared && scope !== 'instance') {
      await this.flush();
      const fleet = await store!.readActivity!();
      const newestMinute = Math.floor(Date.now() / 60_000);
      return {
        scope: 'fleet',
        enabled,
        records: fleet.records,
        trends: fleet.trends.filter((count) => count.minute > newestMinute - 60),
        claims: summarizeClaims(
          fleet.claims.filter(({ minute }) => minute > newestMinute - CLAIM_WINDOW_MINUTES),
          CLAIM_WINDOW_MINUTES,
        ),
        instances: fleet.instances,
        unrouted: mergeUnrouted(fleet.instances),
      };
    }
    return {
      scope: 'instance',
      enabled,
      records: this.journal?.recent() ?? [],
      trends: this.journal?.trends() ?? [],
      claims: this.claims?.summary(CLAIM_WINDOW_MINUTES) ?? {
        windowMinutes: CLAIM_WINDOW_MINUTES,
        claims: 0,
        timed: 0,
        errors: 0,
      },
      instances: [this.heartbeat()],
      unrouted: this.journal?.unrouted() ?? [],
    };
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

  /** This instance as the Center lists it. */
  private heartbeat(): InstanceHeartbeat {
    const counters = emptyCounters();
    for (const byHandler of this.local.values())
      for (const values of byHandler.values()) addInto(counters, values);
    const service = this.lookup<ResolvedIdempotencyOptions>(IDEMPOTENCY_MODULE_OPTIONS)?.identity.service;
    return {
      id: this.instance.id,
      host: this.instance.host,
      pid: this.instance.pid,
      ...(service === undefined ? {} : { service }),
      startedAt: this.instance.startedAt,
      seenAt: new Date().toISOString(),
      counters,
      claims: this.claims?.summary(CLAIM_WINDOW_MINUTES) ?? {
        windowMinutes: CLAIM_WINDOW_MINUTES,
        claims: 0,
        timed: 0,
        errors: 0,
      },
      unrouted: this.journal?.unrouted() ?? [],
    };
  }

  private increment(eventType: string, handler: string, counter: CounterName): void {
    let byHandler = this.local.get(eventType);
    if (byHandler === undefined) this.local.set(eventType, (byHandler = new Map()));
    let counters = byHandler.get(handler);
    if (counters === undefined) byHandler.set(handler, (counters = emptyCounters()));
    counters[counter]++;
    if (this.options.store) {
      const field = eventType + STATS_FIELD_SEPARATOR + handler + STATS_FIELD_SEPARATOR + counter;
      this.pending.set(field, (this.pending.get(field) ?? 0) + 1);
    }
  }

  private assemble(
    counters: Map<string, Map<string, Counters>>,
    scope: IdempotencyStatsSnapshot['scope'],
  ): IdempotencyStatsSnapshot {
    const registry = this.lookup<IdempotentHandlerRegistry>(IdempotentHandlerRegistry);
    const explorer = this.lookup<SqsHandlerExplorer>(SqsHandlerExplorer);
    const types = new Map<string, Map<string, HandlerStats>>();
    const handlerOf = (eventType: string, handler: string): HandlerStats => {
      let byHandler = types.get(eventType);
      if (byHandler === undefined) types.set(eventType, (byHandler = new Map()));
      let stats = byHandler.get(handler);
      if (stats === undefined) {
        stats = { handler, idempotent: false, counters: emptyCounters() };
        byHandler.set(handler, stats);
      }
      return stats;
    };
    for (const policy of registry?.policies() ?? []) {
      Object.assign(handlerOf(policy.eventType, policy.handlerName), {
        idempotent: true,
        keySource: policy.keySource,
        scope: policy.scope,
        ttl: policy.ttl,
        inProgressTtl: policy.inProgressTtl,
        ...(policy.fingerprint ? { fingerprint: policy.fingerprint.source } : {}),
      });
    }
    for (const definition of explorer?.getHandlers() ?? []) {
      handlerOf(definition.eventType, definition.name).queue = definition.queue;
    }
    for (const [eventType, byHandler] of counters) {
      for (const [handler, values] of byHandler) addInto(handlerOf(eventType, handler).counters, values);
    }
    const eventTypes: EventTypeStats[] = [];
    const totals = emptyCounters();
    for (const [eventType, byHandler] of [...types].sort(([a], [b]) => a.localeCompare(b))) {
      const handlers = [...byHandler.values()].sort((a, b) => a.handler.localeCompare(b.handler));
      const typeTotals = emptyCounters();
      for (const handler of handlers) addInto(typeTotals, handler.counters);
      addInto(totals, typeTotals);
      const real = handlers.filter((handler) => handler.handler !== NO_HANDLER);
      eventTypes.push({
        eventType,
        covered: real.length > 0 && real.every((handler) => handler.idempotent),
        handlers,
        totals: typeTotals,
        duplicateRate: duplicateRate(typeTotals),
      });
    }
    const store = this.lookup<IdempotencyStore>(IdempotencyStore);
    const service = this.lookup<ResolvedIdempotencyOptions>(IDEMPOTENCY_MODULE_OPTIONS)?.identity.service;
    return {
      scope,
      generatedAt: new Date().toISOString(),
      store: store?.constructor?.name ?? 'none',
      ...(service === undefined ? {} : { service }),
      storeWarnings: warningsOf(store),
      eventTypes,
      totals,
    };
  }

  private lookup<T>(token: unknown): T | undefined {
    try {
      return this.moduleRef?.get<T>(token as never, { strict: false });
    } catch {
      return undefined;
    }
  }
}

/** The store's warnings, copied; a store whose `warnings` is missing, malformed or throws has none. */
function warningsOf(store: IdempotencyStore | undefined): IdempotencyStoreWarning[] {
  try {
    const warnings: unknown = store?.warnings;
    if (!Array.isArray(warnings)) return [];
    return warnings
      .filter((warning): warning is IdempotencyStoreWarning => typeof warning?.message === 'string')
      .map(({ code, setting, message }) => ({ code: String(code), setting: String(setting), message }));
  } catch {
    return [];
  }
}

/** The fleet's unrouted types: each instance's, added up. */
function mergeUnrouted(instances: readonly InstanceHeartbeat[]): UnroutedEventType[] {
  const merged = new Map<string, UnroutedEventType>();
  for (const instance of instances) {
    for (const type of instance.unrouted ?? []) {
      const seen = merged.get(type.eventType);
      if (seen === undefined) merged.set(type.eventType, { ...type });
      else {
        seen.count += type.count;
        if (type.lastSeenAt > seen.lastSeenAt) seen.lastSeenAt = type.lastSeenAt;
      }
    }
  }
  return [...merged.values()].sort((a, b) => b.lastSeenAt.localeCompare(a.lastSeenAt));
}

function addInto(target: Counters, source: Counters): void {
  for (const name of COUNTER_NAMES) target[name] += source[name];
}

/** Duplicates caught per delivery that reached the idempotency check. */
export function duplicateRate(counters: Counters): number {
  const duplicates = counters.duplicates_completed + counters.duplicates_in_flight;
  const deliveries = duplicates + counters.handled + counters.skipped + counters.failed;
  return deliveries === 0 ? 0 : duplicates / deliveries;
}

function parseFleet(fields: Record<string, number>): Map<string, Map<string, Counters>> {
  const fleet = new Map<string, Map<string, Counters>>();
  for (const [field, value] of Object.entries(fields)) {
    const [eventType, handler, counter] = field.split(STATS_FIELD_SEPARATOR);
    if (!COUNTER_NAMES.includes(counter as CounterName)) continue;
    let byHandler = fleet.get(eventType);
    if (byHandler === undefined) fleet.set(eventType, (byHandler = new Map()));
    let counters = byHandler.get(handler);
    if (counters === undefined) byHandler.set(handler, (counters = emptyCounters()));
    counters[counter as CounterName] += value;
  }
  return fleet;
}
