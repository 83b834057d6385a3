import type { ModuleRef } from '@nestjs/core';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { IdempotentHandlerRegistry } from '../idempotency/idempotent-handler.registry';
import { NO_HANDLER, RecordObservers } from '../idempotency/record-observer';
import { SqsHandlerDefinition, SqsHandlerExplorer } from '../sqs/nest/sqs-handler.explorer';
import { IdempotencyStore, IdempotencyStoreWarning } from '../stores/idempotency-store.interface';
import { summarizeClaims, ClaimLatencySummary } from './claim-latency';
import type { InstanceHeartbeat } from './fleet-activity';
import {
  addCounters,
  COUNTER_NAMES,
  CounterName,
  Counters,
  emptyCounters,
} from '../idempotency/idempotency-counters';
import { STATS_FIELD_SEPARATOR } from './idempotency-stats-store.interface';
import { CLAIM_WINDOW_MINUTES, CountersByType, entryIn, RecordCounters } from './record-counters';
import type { RecentRecord, TrendCount, UnroutedEventType } from './record-journal';

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

/** What `activity()` returns: the fleet's when the stats store shares activity, else this instance's. */
export interface IdempotencyActivitySnapshot {
  scope: 'instance' | 'fleet';
  /** False when `stats.activity` is `false`: nothing is recorded, every list is empty. */
  enabled: boolean;
  /** Recent records that were not a plain success, newest first. */
  records: RecentRecord[];
  /** Per-minute record counts of the last hour (non-zero only). */
  trends: TrendCount[];
  /** How fast the idempotency store answered claims over the last 5 minutes. */
  claims: ClaimLatencySummary;
  /** Instances that reported within the last hour (this one alone without a shared stats store). */
  instances: InstanceHeartbeat[];
  /** Event types that messages named and no handler routes. */
  unrouted: UnroutedEventType[];
}

/**
 * The report behind `IdempotencyStats` (loaded at its first call): the counters, read with what the
 * app declares (the `@Idempotent()` policies, the hosts' handlers, the store).
 */
export class IdempotencyStatsReport {
  private readonly registry: IdempotentHandlerRegistry;
  private readonly store: IdempotencyStore;

  /** `moduleRef`: `IdempotencyModule`'s, which provides the policies and the store. */
  constructor(
    private readonly counters: RecordCounters,
    private readonly moduleRef: ModuleRef,
  ) {
    this.registry = moduleRef.get(IdempotentHandlerRegistry);
    this.store = moduleRef.get(IdempotencyStore);
  }

  async snapshot(scope?: 'instance'): Promise<IdempotencyStatsSnapshot> {
    const store = this.counters.store;
    if (store && scope !== 'instance') {
      await this.counters.flush();
      return this.assemble(parseFleet(await store.read()), 'fleet');
    }
    return this.assemble(this.counters.counts, 'instance');
  }

  flush(): Promise<void> {
    return this.counters.flush();
  }

  async activity(scope?: 'instance', recordsPerKind?: number): Promise<IdempotencyActivitySnapshot> {
    const journal = this.counters.journal;
    const enabled = journal !== undefined;
    const store = this.counters.store;
    if (enabled && typeof store?.report === 'function' && store.readActivity && scope !== 'instance') {
      await this.counters.flush();
      const fleet = await store.readActivity(recordsPerKind);
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
      records: journal?.recent(recordsPerKind) ?? [],
      trends: journal?.trends() ?? [],
      claims: this.counters.claimSummary(),
      instances: [this.counters.heartbeat()],
      unrouted: journal?.unrouted() ?? [],
    };
  }

  private assemble(
    counters: CountersByType,
    scope: IdempotencyStatsSnapshot['scope'],
  ): IdempotencyStatsSnapshot {
    const types = new Map<string, Map<string, HandlerStats>>();
    const handlerOf = (eventType: string, handler: string): HandlerStats =>
      entryIn(types, eventType, handler, () => ({ handler, idempotent: false, counters: emptyCounters() }));
    for (const policy of this.registry.policies()) {
      Object.assign(handlerOf(policy.eventType, policy.handlerName), {
        idempotent: true,
        keySource: policy.keySource,
        scope: policy.scope,
        ttl: policy.ttl,
        inProgressTtl: policy.inProgressTtl,
        ...(policy.fingerprint ? { fingerprint: policy.fingerprint.source } : {}),
      });
    }
    for (const { eventType, name, queue } of this.messageHandlers()) handlerOf(eventType, name).queue = queue;
    for (const [eventType, byHandler] of counters) {
      for (const [handler, values] of byHandler) addCounters(handlerOf(eventType, handler).counters, values);
    }
    const eventTypes: EventTypeStats[] = [];
    const totals = emptyCounters();
    for (const [eventType, byHandler] of [...types].sort(([a], [b]) => a.localeCompare(b))) {
      const handlers = [...byHandler.values()].sort((a, b) => a.handler.localeCompare(b.handler));
      const typeTotals = emptyCounters();
      for (const handler of handlers) addCounters(typeTotals, handler.counters);
      addCounters(totals, typeTotals);
      const real = handlers.filter((handler) => handler.handler !== NO_HANDLER);
      eventTypes.push({
        eventType,
        covered: real.length > 0 && real.every((handler) => handler.idempotent),
        handlers,
        totals: typeTotals,
        duplicateRate: duplicateRate(typeTotals),
      });
    }
    const service = this.counters.service;
    return {
      scope,
      generatedAt: new Date().toISOString(),
      store: this.store.constructor?.name ?? 'none',
      ...(service === undefined ? {} : { service }),
      storeWarnings: warningsOf(this.store),
      eventTypes,
      totals,
    };
  }

  /** The app's `@SqsMessageHandler()` handlers with their queues (none without an SQS host). */
  private messageHandlers(): readonly SqsHandlerDefinition[] {
    try {
      return this.moduleRef.get(SqsHandlerExplorer, { strict: false }).getHandlers();
    } catch {
      return [];
    }
  }
}

/**
 * The report over the counters installed among `observers`; without them (no `stats`, no Center) the
 * error that names both.
 */
export function openStatsReport(moduleRef: ModuleRef): IdempotencyStatsReport {
  const counters = moduleRef.get(RecordObservers).find(RecordCounters);
  if (counters === undefined) {
    throw new IdempotencyConfigurationError(
      'IdempotencyStats: this app runs no counters. Turn them on with IdempotencyModule.forRoot({ stats: {} }) ' +
        '(a stats store shares them across instances), or import IdempotencyCenterModule.forRoot({ ... }), ' +
        'which turns them on itself.',
    );
  }
  return new IdempotencyStatsReport(counters, moduleRef);
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

/** Duplicates caught per delivery that reached the idempotency check. */
function duplicateRate(counters: Counters): number {
  const duplicates = counters.duplicates_completed + counters.duplicates_in_flight;
  const deliveries = duplicates + counters.handled + counters.skipped + counters.failed;
  return deliveries === 0 ? 0 : duplicates / deliveries;
}

function parseFleet(fields: Record<string, number>): Map<string, Map<string, Counters>> {
  const fleet = new Map<string, Map<string, Counters>>();
  for (const [field, value] of Object.entries(fields)) {
    const [eventType, handler, counter] = field.split(STATS_FIELD_SEPARATOR);
    if (COUNTER_NAMES.includes(counter as CounterName))
      entryIn(fleet, eventType, handler, emptyCounters)[counter as CounterName] += value;
  }
  return fleet;
}
