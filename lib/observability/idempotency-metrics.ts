import type { Attributes, Counter, Histogram, Meter, MeterProvider } from '@opentelemetry/api';
import { loadOptionalDependency } from '../optional-dependency';
import { COUNTER_NAMES, CounterName } from './idempotency-counters';

/** Prefix of every instrument name: `idempotent_sqs.handled`, `idempotent_sqs.record.duration`, ... */
export const METRIC_PREFIX = 'idempotent_sqs';

/**
 * The counters of the Idempotency Center as OpenTelemetry instruments, through `@opentelemetry/api`
 * (an optional peer: without it, or without an SDK, everything here is a no-op). The meter is taken
 * on first use, after the app (and the SDK it starts) is up; attribute sets are cached per event
 * type, handler and status so recording allocates nothing.
 */
export class IdempotencyMetrics {
  private instruments: { counters: Record<CounterName, Counter>; duration: Histogram } | null | undefined;
  private readonly attributeCache = new Map<string, Attributes>();

  constructor(private readonly meterProvider?: MeterProvider) {}

  add(counter: CounterName, eventType: string, handler: string, status: string, durationMs?: number): void {
    const instruments = this.instruments === undefined ? this.createInstruments() : this.instruments;
    if (!instruments) return;
    const attributes = this.attributes(eventType, handler, status);
    instruments.counters[counter].add(1, attributes);
    if (durationMs !== undefined) instruments.duration.record(durationMs, attributes);
  }

  private attributes(eventType: string, handler: string, status: string): Attributes {
    const cacheKey = `${eventType}\t${handler}\t${status}`;
    let attributes = this.attributeCache.get(cacheKey);
    if (attributes === undefined) {
      attributes = { event_type: eventType, handler, status };
      this.attributeCache.set(cacheKey, attributes);
    }
    return attributes;
  }

  private createInstruments(): NonNullable<IdempotencyMetrics['instruments']> | null {
    const meter = this.meter();
    if (!meter) return (this.instruments = null);
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

  private meter(): Meter | undefined {
    if (this.meterProvider) return this.meterProvider.getMeter('nestjs-idempotent-sqs');
    const api = loadOptionalDependency<typeof import('@opentelemetry/api')>('@opentelemetry/api');
    return api?.metrics.getMeter('nestjs-idempotent-sqs');
  }
}
