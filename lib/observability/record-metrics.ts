import type { Attributes, Counter, Histogram, Meter } from '@opentelemetry/api';
import { COUNTER_NAMES, CounterName } from '../idempotency/idempotency-counters';
import type { IdempotencyPolicy } from '../idempotency/idempotency-policy';
import type { IdempotencyOutcome } from '../idempotency/idempotency-state';
import type { ClaimEvent, RecordObserver } from '../idempotency/record-observer';
import { counterOfStatus, SqsRecordStatus } from '../idempotency/record-outcome';

/** Prefix of every instrument name: `idempotent_sqs.handled`, `idempotent_sqs.record.duration`, ... */
export const METRIC_PREFIX = 'idempotent_sqs';

/** The status a claim event's metric carries. */
const CLAIM_EVENT_STATUS: Record<ClaimEvent, string> = {
  leases_lost: 'LEASE_LOST',
  completions_lost: 'COMPLETION_LOST',
  fingerprint_mismatches: 'FINGERPRINT_MISMATCH',
  store_errors: 'STORE_ERROR',
};

/**
 * The Center's counters as OpenTelemetry instruments, an observer of its own: installed at bootstrap
 * where the app gives a meter provider or registered one globally (`record-observers.providers.ts`).
 * Attribute sets are cached per event type, handler and status.
 */
export class RecordMetrics implements RecordObserver {
  private readonly counters = {} as Record<CounterName, Counter>;
  private readonly duration: Histogram;
  /** Attribute sets by event type, handler and status: nested maps, so a lookup builds no key string. */
  private readonly attributeCache = new Map<string, Map<string, Map<string, Attributes>>>();

  constructor(meter: Meter) {
    for (const name of COUNTER_NAMES) {
      this.counters[name] = meter.createCounter(`${METRIC_PREFIX}.${name}`, {
        description: `SQS records counted as ${name.replace(/_/g, ' ')}`,
      });
    }
    this.duration = meter.createHistogram(`${METRIC_PREFIX}.record.duration`, {
      description: 'Time from a record entering the dispatcher to its outcome',
      unit: 'ms',
    });
  }

  countCall(
    eventType: string,
    handler: string,
    status: SqsRecordStatus,
    outcome: IdempotencyOutcome | undefined,
    durationMs: number,
  ): void {
    const attributes = this.attributes(eventType, handler, status);
    this.counters[counterOfStatus(status)].add(1, attributes);
    this.duration.record(durationMs, attributes);
    if (outcome === 'KEYLESS' || outcome === 'UNCLAIMED') this.counters.keyless.add(1, attributes);
  }

  countClaimEvent(policy: IdempotencyPolicy, event: ClaimEvent): void {
    this.counters[event].add(
      1,
      this.attributes(policy.eventType, policy.handlerName, CLAIM_EVENT_STATUS[event]),
    );
  }

  // The Center's journal and claim latency have no instruments.
  recordEnded(): void {}
  claimAnswered(): void {}
  claimFailed(): void {}

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
}
