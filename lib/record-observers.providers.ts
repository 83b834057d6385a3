import type { Provider } from '@nestjs/common';
import type { Meter } from '@opentelemetry/api';
import { MissingPeerDependencyError, optionalPeer } from './common/optional-peer';
import { IDEMPOTENCY_MODULE_OPTIONS, IDEMPOTENCY_STATS_OPTIONS } from './idempotency/idempotency.constants';
import type { ResolvedIdempotencyOptions } from './idempotency/idempotency-options.interface';
import { RecordObservers } from './idempotency/record-observer';
import type {
  IdempotencyStatsOptions,
  MeterProviderLike,
} from './observability/idempotency-stats-store.interface';

const loadOpenTelemetry = optionalPeer(
  '@opentelemetry/api',
  'OpenTelemetry metrics',
  () => import('@opentelemetry/api'),
);

/**
 * The app's record observers (`RecordObservers`), each installed at bootstrap only where the app asks
 * for it, and its code loaded only there: the Center's counters and journal with `stats` (the Center's
 * module installs them too); OpenTelemetry metrics where `stats.meterProvider` is given, or where
 * `@opentelemetry/api` is installed and an SDK has registered a global meter provider by then. A factory
 * answers what has lifecycle hooks for Nest to run (the counters flush at shutdown), else `null`.
 */
export const RECORD_OBSERVER_PROVIDERS: Provider[] = [
  RecordObservers,
  {
    provide: Symbol('RECORD_COUNTERS'),
    useFactory: async (
      observers: RecordObservers,
      stats: IdempotencyStatsOptions | null,
      options: ResolvedIdempotencyOptions,
    ) =>
      stats &&
      (await import('./observability/record-counters')).installRecordCounters(observers, stats, options),
    inject: [RecordObservers, IDEMPOTENCY_STATS_OPTIONS, IDEMPOTENCY_MODULE_OPTIONS],
  },
  {
    provide: Symbol('RECORD_METRICS'),
    useFactory: async (observers: RecordObservers, stats: IdempotencyStatsOptions | null) => {
      const meter = await meterOf(stats?.meterProvider);
      if (meter) observers.add(new (await import('./observability/record-metrics')).RecordMetrics(meter));
      return null;
    },
    inject: [RecordObservers, IDEMPOTENCY_STATS_OPTIONS],
  },
];

/** The meter of the provider given, else of the global one; `undefined` with neither (no SDK registered). */
async function meterOf(given: MeterProviderLike | undefined): Promise<Meter | undefined> {
  if (given) return given.getMeter('nestjs-idempotent-sqs') as Meter;
  const api = await loadOpenTelemetry().catch((error: unknown) => {
    if (error instanceof MissingPeerDependencyError) return undefined;
    throw error;
  });
  const meter = api?.metrics.getMeter('nestjs-idempotent-sqs');
  // Without an SDK the API answers its no-op meter, whose instruments would cost every record for nothing.
  return meter === api?.createNoopMeter?.() ? undefined : meter;
}
