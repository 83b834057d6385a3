/**
 * `nestjs-idempotent-sqs/center`: the Idempotency Center and what it reads: the module and its API's
 * shapes, `IdempotencyStats` and its snapshots, the stats stores (Redis's is on `/redis`), and
 * `RecordTimingInterceptor`.
 *
 * @module nestjs-idempotent-sqs/center
 */
export { IdempotencyCenterModule } from './idempotency-center.module';
export type { IdempotencyCenterOptions } from './idempotency-center-options.interface';
export type {
  CenterEventType,
  CenterKeyLookup,
  CenterKeyState,
  CenterOverview,
  CenterRecords,
  CenterStoreHealth,
  CenterTrend,
} from './idempotency-center.api';
export { IdempotencyStats } from '../observability/idempotency-stats.service';
export type {
  EventTypeStats,
  HandlerStats,
  IdempotencyActivitySnapshot,
  IdempotencyStatsSnapshot,
} from '../observability/idempotency-stats.service';
export type { RecentRecord, TrendCount, UnroutedEventType } from '../observability/record-journal';
export type { ClaimLatencySummary } from '../observability/claim-latency';
export type { MinuteDelta } from '../observability/minute-series';
export type { ActivityReport, FleetActivity, InstanceHeartbeat } from '../observability/fleet-activity';
export type { CounterName, Counters } from '../idempotency/idempotency-counters';
export type {
  IdempotencyActivityOptions,
  IdempotencyStatsOptions,
  IdempotencyStatsStore,
  MeterProviderLike,
} from '../observability/idempotency-stats-store.interface';
export { InMemoryIdempotencyStatsStore } from '../observability/in-memory-idempotency-stats.store';
export { RecordTimingInterceptor } from '../observability/record-timing.interceptor';
