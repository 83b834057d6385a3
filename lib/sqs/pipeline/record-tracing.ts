import type { Attributes, Context, Link, Span, SpanContext, TextMapGetter, Tracer } from '@opentelemetry/api';
import type { OpenTelemetryApi } from '../../common/tracer-provider.check';
import { hashKeyForDisplay } from '../../idempotency/idempotency-key';
import type { IdempotencyOutcome } from '../../idempotency/idempotency-state';
import type { BatchCallTracer, ClaimEvent, RecordObserver } from '../../idempotency/record-observer';
import { isFailedStatus, type SqsRecordResult } from '../../idempotency/record-outcome';
import type { AcquireResult } from '../../stores/idempotency-store.interface';
import type { SqsTracingOptions } from '../sqs-module-options.interface';
import type { SqsMessageAttributeValue, SqsRecordLike } from '../sqs-record.interface';

/**
 * A span per record, on every host (issue 52): `process <queue>`, kind CONSUMER, current while the
 * record is decoded, claimed and handled, so Nest's enhancers and the handler's own spans are its
 * children. It follows the OpenTelemetry messaging conventions (the 2024 names) and links to the
 * context the message was sent in. The package's own facts go under `idempotent_sqs.*`, never
 * `messaging.*`. Loaded only where an SDK registered a tracer provider (`registeredTracerApi()`).
 */

/** The prefix of the package's own span attributes and events. */
export const TRACING_PREFIX = 'idempotent_sqs.';

/** The package's attribute and event names, built once (a template per record would build each again). */
const ATTR_BATCH_SIZE = 'idempotent_sqs.batch.size';
const ATTR_CLAIM = 'idempotent_sqs.claim';
const ATTR_CLAIM_ANSWER = 'idempotent_sqs.claim.answer';
const ATTR_CLAIM_DURATION_MS = 'idempotent_sqs.claim.duration_ms';
const ATTR_EVENT_TYPE = 'idempotent_sqs.event_type';
const ATTR_HANDLER = 'idempotent_sqs.handler';
const ATTR_KEY = 'idempotent_sqs.key';
const ATTR_KEY_HASH = 'idempotent_sqs.key_hash';
const ATTR_MESSAGE_GROUP = 'idempotent_sqs.message_group';
const ATTR_RECEIVE_COUNT = 'idempotent_sqs.receive_count';
const ATTR_STATUS = 'idempotent_sqs.status';

/** Where a message carries its sender's context, read by the globally registered propagator. */
const MESSAGE_ATTRIBUTES: TextMapGetter<Record<string, SqsMessageAttributeValue>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key]?.stringValue,
};
/** Message attributes inside an SNS notification (`{ Type, Value }`). */
const SNS_ATTRIBUTES: TextMapGetter<Record<string, { Value?: unknown }>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key]?.Value;
    return typeof value === 'string' ? value : undefined;
  },
};
/** The X-Ray propagator reads its header by this name (an SQS message carries it as `AWSTraceHeader`). */
const XRAY_HEADER = 'x-amzn-trace-id';

/** The record tracer of one host's pipeline. */
export class RecordTracing {
  private readonly tracer: Tracer;
  /** Where a record's span is kept in its context, for the claim's events (a handler may make its own span current). */
  readonly recordSpanKey: symbol;
  /** Adds the claim's events to the span of the record whose context it runs in. */
  readonly claimObserver: RecordObserver;
  /** Runs a store call made for several records under a span of its own, linked to theirs. */
  readonly batchCalls: BatchCallTracer;

  constructor(
    readonly api: OpenTelemetryApi,
    readonly options: SqsTracingOptions = {},
  ) {
    this.tracer = api.trace.getTracer('nestjs-idempotent-sqs');
    this.recordSpanKey = api.createContextKey('nestjs-idempotent-sqs record span');
    this.claimObserver = new ClaimSpanEvents(api, this.recordSpanKey);
    this.batchCalls = new BatchCallSpans(api, this.tracer, this.recordSpanKey);
  }

  /** Opens a record's span under the current context; `queueUrl` where the host knows it. */
  start(record: SqsRecordLike, queue: string, queueUrl: string | undefined): RecordSpan {
    const { api } = this;
    const ambient = api.context.active();
    const sent = this.sentFrom(record);
    const ambientSpan = api.trace.getSpanContext(ambient);
    let parent: Context = ambient;
    let links: Link[] | undefined;
    if (sent !== undefined && this.options.parent === 'producer') {
      parent = api.trace.setSpanContext(ambient, sent);
      if (ambientSpan !== undefined && api.isSpanContextValid(ambientSpan))
        links = [{ context: ambientSpan }];
    } else if (sent !== undefined) {
      links = [{ context: sent }];
    }
    const span = this.tracer.startSpan(
      `process ${queue}`,
      { kind: api.SpanKind.CONSUMER, attributes: startAttributes(record, queue, queueUrl), links },
      parent,
    );
    return new RecordSpan(this, span, api.trace.setSpan(parent, span).setValue(this.recordSpanKey, span));
  }

  /** The context the message was sent in: W3C (or any registered format), else X-Ray, else its SNS envelope's. */
  private sentFrom(record: SqsRecordLike): SpanContext | undefined {
    if (record === null || typeof record !== 'object') return undefined;
    const { api } = this;
    const root = api.ROOT_CONTEXT;
    const attributes = record.messageAttributes;
    if (attributes !== undefined && attributes !== null) {
      const found = validSpanContext(api, api.propagation.extract(root, attributes, MESSAGE_ATTRIBUTES));
      if (found !== undefined) return found;
    }
    const xray = record.attributes?.AWSTraceHeader;
    if (typeof xray === 'string') {
      const found = validSpanContext(api, api.propagation.extract(root, { [XRAY_HEADER]: xray }));
      if (found !== undefined) return found;
    }
    const sns = snsMessageAttributes(record.body);
    return sns && validSpanContext(api, api.propagation.extract(root, sns, SNS_ATTRIBUTES));
  }
}

/** One record's span and the context that makes it current. */
export class RecordSpan {
  private ended = false;
  private handlers: string | undefined = undefined;

  constructor(
    private readonly tracing: RecordTracing,
    readonly span: Span,
    readonly context: Context,
  ) {}

  /** Runs `work` with the record's span current (its async continuations too). */
  run<T>(work: () => T): T {
    return this.tracing.api.context.with(this.context, work);
  }

  /** The trace id for the record's log line and the Center, while the span records. */
  get traceId(): string | undefined {
    return this.span.isRecording() ? this.span.spanContext().traceId : undefined;
  }

  /** A handler is called for the record (several are listed in order). */
  handlerCalled(name: string): void {
    this.handlers = this.handlers === undefined ? name : `${this.handlers},${name}`;
  }

  /** Ends the span with the record's outcome (once: a record that timed out ends when its timeout fails it). */
  end(result: SqsRecordResult, outcome: IdempotencyOutcome | undefined): void {
    if (this.ended) return;
    this.ended = true;
    const { span } = this;
    if (!span.isRecording()) {
      span.end();
      return;
    }
    const attributes: Attributes = { [ATTR_STATUS]: result.status };
    if (outcome !== undefined) attributes[ATTR_CLAIM] = outcome;
    if (result.eventType !== undefined) attributes[ATTR_EVENT_TYPE] = result.eventType;
    if (this.handlers !== undefined) attributes[ATTR_HANDLER] = this.handlers;
    if (result.key !== undefined) {
      if (this.tracing.options.recordKeys === true) attributes[ATTR_KEY] = result.key;
      else attributes[ATTR_KEY_HASH] = hashKeyForDisplay(result.key);
    }
    const { error } = result;
    if (isFailedStatus(result.status)) {
      attributes['error.type'] = errorType(error, result.status);
      span.setStatus({ code: this.tracing.api.SpanStatusCode.ERROR, message: error?.message });
      if (result.status === 'FAILED' && error !== undefined) span.recordException(error);
    }
    span.setAttributes(attributes);
    span.end();
  }
}

/** The claim's events, on the span of the record in whose context the claim runs. */
class ClaimSpanEvents implements RecordObserver {
  constructor(
    private readonly api: OpenTelemetryApi,
    private readonly recordSpanKey: symbol,
  ) {}

  private recordSpan(): Span | undefined {
    return this.api.context.active().getValue(this.recordSpanKey) as Span | undefined;
  }

  countCall(): void {}
  recordEnded(): void {}
  claimFailed(): void {}

  claimAnswered(durationMs: number, answer?: AcquireResult): void {
    this.recordSpan()?.addEvent(ATTR_CLAIM, {
      [ATTR_CLAIM_ANSWER]: answer ?? 'UNKNOWN',
      [ATTR_CLAIM_DURATION_MS]: durationMs,
    });
  }

  countClaimEvent(_policy: unknown, event: ClaimEvent): void {
    this.recordSpan()?.addEvent(CLAIM_EVENTS[event]);
  }
}

/**
 * The span of a store call made for several records (a turn's claims in one `tryAcquireMany`): a trace
 * of its own, linked to each record's span, so the store client's spans land under it. Its records'
 * spans are the ones current where they added their entries.
 */
class BatchCallSpans implements BatchCallTracer {
  constructor(
    private readonly api: OpenTelemetryApi,
    private readonly tracer: Tracer,
    private readonly recordSpanKey: symbol,
  ) {}

  origin(): unknown {
    return (this.api.context.active().getValue(this.recordSpanKey) as Span | undefined)?.spanContext();
  }

  async run<T>(method: string, origins: readonly unknown[], call: () => Promise<T>): Promise<T> {
    const { api } = this;
    const links: Link[] = [];
    for (const origin of origins) if (origin !== undefined) links.push({ context: origin as SpanContext });
    const span = this.tracer.startSpan(
      `idempotency ${method}`,
      {
        kind: api.SpanKind.INTERNAL,
        attributes: { [ATTR_BATCH_SIZE]: origins.length },
        links,
        root: true,
      },
      api.ROOT_CONTEXT,
    );
    try {
      return await api.context.with(api.trace.setSpan(api.ROOT_CONTEXT, span), call);
    } catch (error) {
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: (error as Error)?.message });
      throw error;
    } finally {
      span.end();
    }
  }
}

/** The span event of each claim event (its counter name, singular). */
const CLAIM_EVENTS: Readonly<Record<ClaimEvent, string>> = {
  leases_lost: 'idempotent_sqs.lease_lost',
  completions_lost: 'idempotent_sqs.completion_lost',
  store_errors: 'idempotent_sqs.store_error',
  fingerprint_mismatches: 'idempotent_sqs.fingerprint_mismatch',
};

/** What sampling may read: set when the span starts. */
function startAttributes(record: SqsRecordLike, queue: string, queueUrl: string | undefined): Attributes {
  const attributes: Attributes = {
    'messaging.system': 'aws_sqs',
    'messaging.operation.name': 'process',
    'messaging.operation.type': 'process',
    'messaging.destination.name': queue,
  };
  if (queueUrl !== undefined) attributes['aws.sqs.queue.url'] = queueUrl;
  if (record === null || typeof record !== 'object') return attributes;
  if (typeof record.messageId === 'string') attributes['messaging.message.id'] = record.messageId;
  const system = record.attributes;
  if (system !== undefined && system !== null) {
    const receives = Number(system.ApproximateReceiveCount);
    if (receives > 0) attributes[ATTR_RECEIVE_COUNT] = receives;
    const group = system.MessageGroupId;
    if (typeof group === 'string') attributes[ATTR_MESSAGE_GROUP] = group;
  }
  return attributes;
}

function validSpanContext(api: OpenTelemetryApi, context: Context): SpanContext | undefined {
  const found = api.trace.getSpanContext(context);
  return found !== undefined && api.isSpanContextValid(found) ? found : undefined;
}

/** The message attributes of an SNS notification (raw delivery off), if the body is one. */
function snsMessageAttributes(body: unknown): Record<string, { Value?: unknown }> | undefined {
  // Parsed again only for a body that says it is one: the decoding stage parses it for the handler later.
  if (typeof body !== 'string' || !body.includes('"TopicArn"') || !body.includes('"MessageAttributes"')) {
    return undefined;
  }
  try {
    const parsed = JSON.parse(body) as { Type?: unknown; MessageAttributes?: unknown };
    const attributes = parsed?.MessageAttributes;
    return parsed?.Type === 'Notification' && attributes !== null && typeof attributes === 'object'
      ? (attributes as Record<string, { Value?: unknown }>)
      : undefined;
  } catch {
    return undefined; // not JSON: the decoding stage says so
  }
}

/** `error.type`: the error's `code` (the library's errors have one), else its class, else the status. */
function errorType(error: Error | undefined, status: string): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && code.length > 0) return code;
  return error?.constructor?.name && error.constructor !== Error ? error.constructor.name : status;
}
