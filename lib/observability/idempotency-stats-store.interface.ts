/**
 * Where counters are shared across instances, so the Idempotency Center shows the fleet and not
 * one process. Structural like the idempotency store: any backend with these two methods works.
 * Fields are `<event type>\t<handler>\t<counter>`.
 */
export interface IdempotencyStatsStore {
  /** Adds the increments; called in the background, never on a message's critical path. */
  add(increments: ReadonlyMap<string, number>): Promise<void>;
  /** The fleet's totals, by field. */
  read(): Promise<Record<string, number>>;
}

/** Options of the counters (`stats` in `IdempotencyModule.forRoot()`). */
export interface IdempotencyStatsOptions {
  /** Share counters across instances (e.g. `new RedisIdempotencyStatsStore(redis)`). Default: this process only. */
  store?: IdempotencyStatsStore;
  /** How often local increments are flushed to the shared store. Default 1,000 ms. */
  flushIntervalMs?: number;
  /** The OpenTelemetry meter provider; default the global one of `@opentelemetry/api`. */
  meterProvider?: MeterProviderLike;
}

/**
 * A `MeterProvider` of `@opentelemetry/api` (an SDK's, or a test's), declared structurally so the
 * package's types compile without the optional peer.
 */
export interface MeterProviderLike {
  getMeter(name: string, version?: string, options?: any): unknown;
}

export const STATS_FIELD_SEPARATOR = '\t';
