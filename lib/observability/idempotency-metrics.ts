import type { Attributes, Counter, Histogram, Meter } from '@opentelemetry/api';
import { MissingPeerDependencyError, optionalPeer } from '../common/optional-peer';
import { COUNTER_NAMES, CounterName } from '../idempotency/idempotency-counters';
import type { MeterProviderLike } from './idempotency-stats-store.interface';

/** Prefix of every instrument name: `idempotent_sqs.handled`, `idempotent_sqs.record.duration`, ... */
export const METRIC_PREFIX = 'idempotent_sqs';

const loadOpenTelemetry = optionalPeer(
  '@opentelemetry/api',
  'OpenTelemetry metrics',
  () => import('@opentelemetry/api'),
);

type Instruments = { counters: Record<CounterName, Counter>; duration: Histogram };

/**
 * The counters as OpenTelemetry instruments (a no-op without the optional API or an SDK); attribute
 * sets are cached per event type, handler and status.
 */
export class IdempotencyMetrics {
  private instruments: Instruments | null | undefined;
  /** Attribute sets by event type, handler and status: nested maps, so a lookup builds no key string. */
  private readonly attributeCache = new Map<string, Map<string, Map<string, Attributes>>>();

  constructor(private provider?: MeterProviderLike) {}

  /** Loads `@opentelemetry/api` unless a provider was given; without it, metrics stay off. */
  async load(): Promise<void> {
    if (this.provider) return;
    try {
      const { metrics } = await loadOpenTelemetry();
      this.provider = { getMeter: (name, version) => metrics.getMeter(name, version) };
    } catch (error) {
      if (!(error instanceof MissingPeerDependencyError)) throw error;
      this.instruments = null;
    }
  }

  add(counter: CounterName, eventType: string, handler: string, status: string, durationMs?: number): void {
    if (this.instruments === null) return;
    const instruments = this.instruments ?? this.createInstruments();
    if (!instruments) return;
    const attributes = this.attributes(eventType, handler, status);
    instruments.counters[counter].add(1, attributes);
    if (durationMs !== undefined) instruments.duration.record(durationMs, attributes);
  }

  private attributes(eventType: string, handler: string, status: string): Attributes {
    let byHandler = this.attributeCache.get(eventType);
    if (byHandler === undefined) this.attributeCache.set(eventType, (byHandler = new Map()));
    let byStatus = byHandler.get(handler);
    if (byStatus === undefined) byHandler.set(handler, (byStatus = new Map()));
    let attributes = byStatus.get(status);
    if (attributes === undefined)
      byStatus.set(status, (attributes = { event_type: eventType, handler, status }));
    return attributes;
  }

  /** `undefined` until the API is loaded (records before bootstrap ends are not metered). */
  private createInstruments(): Instruments | undefined {
    if (!this.provider) return undefined;
    const meter = this.provider.getMeter('nestjs-idempotent-sqs') as Meter;
    const counters = {} as Record<CounterName, Counter>;
    for (const name of COUNTER_NAMES) {
      counters[name] = meter.createCounter(`${METRIC_PREFIX}.${name}`, {
        description: `SQS records counted as ${name.replace(/_/g, ' ')}`,
      });
    }
    const duration = meter.createHistogram(`${METRIC_PREFIX}.record.duration`, {
      description: 'Time from a record entering the dispatcher to its outcome',
      unit: 'ms',
    });
    return (this.instruments = { counters, duration });
  }
}
