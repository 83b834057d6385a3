import type { ActivityReport, FleetActivity } from './fleet-activity';

/**
 * Where counters are shared across instances, so the Idempotency Center shows the fleet and not
 * one process. Structural like the idempotency store: any backend with `add` and `read` works.
 * Fields are `<event type>\t<handler>\t<counter>`.
 *
 * A store that also has `report` and `readActivity` shares the rest of what the Center shows:
 * recent records, per-minute trends, claim latency and the instances seen recently. Without them,
 * each Center shows those of its own instance only (the counters stay fleet-wide).
 */
export interface IdempotencyStatsStore {
  /** Adds the increments; called in the background, never on a message's critical path. */
  add(increments: ReadonlyMap<string, number>): Promise<void>;
  /** The fleet's totals, by field. */
  read(): Promise<Record<string, number>>;
  /**
   * Keeps what one instance reports at a flush (background): its heartbeat, its new recent records,
   * its per-minute increments. Optional.
   */
  report?(report: ActivityReport): Promise<void>;
  /** The fleet's recent activity, as `report` kept it. Optional (with `report`). */
  readActivity?(): Promise<FleetActivity>;
}

/** Options of the counters (`stats` in `IdempotencyModule.forRoot()`). */
export interface IdempotencyStatsOptions {
  /** Share counters across instances (e.g. `new RedisIdempotencyStatsStore(redis)`). Default: this process only. */
  store?: IdempotencyStatsStore;
  /** How often local increments are flushed to the shared store. Default 1,000 ms. */
  flushIntervalMs?: number;
  /** The OpenTelemetry meter provider; default the global one of `@opentelemetry/api`. */
  meterProvider?: MeterProviderLike;
  /**
   * What the Idempotency Center shows beyond the counters: the recent records that were not a
   * plain success (per event type, the last `recentPerType` failures and, apart, the last
   * `recentPerType` duplicates and skips; default 20), per-minute trends over the last hour, and the
   * store's claim latency. On by default (it costs nothing measurable per message:
   * see the README's benchmarks); `false` turns it off.
   */
  activity?: false | IdempotencyActivityOptions;
}

/** Options of the Center's activity (`stats.activity`). */
export interface IdempotencyActivityOptions {
  /**
   * Recent failures (failed, invalid) kept per event type, and as many duplicates and skips apart.
   * Default 20; 0 keeps none.
   */
  recentPerType?: number;
}

/**
 * A `MeterProvider` of `@opentelemetry/api` (an SDK's, or a test's), declared structurally so the
 * package's types compile without the optional peer.
 */
export interface MeterProviderLike {
  getMeter(name: string, version?: string, options?: any): unknown;
}

export const STATS_FIELD_SEPARATOR = '\t';

/** Options of the Idempotency Center's counters (`stats` in `IdempotencyModule.forRoot()`). */
export const IDEMPOTENCY_STATS_OPTIONS = Symbol('IDEMPOTENCY_STATS_OPTIONS');
