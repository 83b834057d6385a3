import type { ActivityReport, FleetActivity } from './fleet-activity';

/**
 * Where counters are shared across instances (fields `<event type>\t<handler>\t<counter>`), so the
 * Center shows the fleet; with `report` and `readActivity` it shares the recent activity too.
 */
export interface IdempotencyStatsStore {
  /** Adds the increments; called in the background, never on a message's critical path. */
  add(increments: ReadonlyMap<string, number>): Promise<void>;
  /** The fleet's totals, by field. */
  read(): Promise<Record<string, number>>;
  /** Keeps an instance's flush: its heartbeat, recent records, per-minute increments. */
  report?(report: ActivityReport): Promise<void>;
  /**
   * The fleet's recent activity, as `report` kept it, with at most `recordsPerKind` of the newest failures and
   * as many duplicates and skips (the Center's overview reads what it can show). Optional (with `report`).
   */
  readActivity?(recordsPerKind?: number): Promise<FleetActivity>;
}

/** Options of the counters (`stats` in `IdempotencyModule.forRoot()`). */
export interface IdempotencyStatsOptions {
  /** Share counters across instances (e.g. `new RedisIdempotencyStatsStore(redis)`). Default: this process only. */
  store?: IdempotencyStatsStore;
  /** How often local increments are flushed to the shared store. Default 1,000 ms. */
  flushIntervalMs?: number;
  /** The OpenTelemetry meter provider; default the global one of `@opentelemetry/api`. */
  meterProvider?: MeterProviderLike;
  /** The recent records, trends and claim latency the Center shows beyond counters; `false` turns them off. */
  activity?: false | IdempotencyActivityOptions;
}

/** Options of the Center's activity (`stats.activity`). */
export interface IdempotencyActivityOptions {
  /** Recent failures kept per event type, and as many duplicates and skips: 0 to 10,000. Default 20. */
  recentPerType?: number;
}

/** An OpenTelemetry `MeterProvider`, structurally. */
export interface MeterProviderLike {
  getMeter(name: string, version?: string, options?: any): unknown;
}

export const STATS_FIELD_SEPARATOR = '\t';
