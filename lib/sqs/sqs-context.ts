import type { ArgumentsHost } from '@nestjs/common';
import { ARRIVED_PAYLOAD } from '../idempotency/idempotency.constants';
import type { IdempotencyState } from '../idempotency/idempotency-state';
import type { SqsEnvelope, SqsEnvelopeKind } from './sqs-envelope.interface';
import type { SqsMessageAttributeValue, SqsRecordAttributes, SqsRecordLike } from './sqs-record.interface';

/** The context type of SQS handler calls: `executionContext.getType() === 'sqs'`. */
export const SQS_CONTEXT_TYPE = 'sqs';

/** Per-message state shared by guards, interceptors and the handler. */
export type SqsContextState = IdempotencyState;

/** Every SQS handler's second argument: where the message came from and what the pipeline decided. */
export class SqsContext {
  /** Per-message state; `state.idempotencyKey` holds the resolved key of an `@Idempotent()` handler. */
  readonly state: SqsContextState = {};
  /** The routed event type (set once the message is routed). */
  eventType: string | undefined = undefined;
  /** The envelopes the message came in, outermost first (empty for a raw message). */
  envelopes: readonly SqsEnvelope[] = NO_ENVELOPES;
  /** The id an envelope gives the event (EventBridge and CloudEvents `id`, S3's object and sequencer): the default key. */
  envelopeKey: string | undefined = undefined;
  /** The payload as decoded (the body, or the event an envelope held), before the event class: what fingerprints hash. */
  [ARRIVED_PAYLOAD]: unknown = undefined;

  constructor(
    /** The message, as an SQS Lambda record (the polling host maps SDK messages onto this shape). */
    readonly record: SqsRecordLike,
    /** Queue name: as configured in `SqsModule`, or taken from the Lambda record's ARN. */
    readonly queue: string,
    /** The host's own message object (Lambda record, SDK `Message`), for what this class does not surface. */
    readonly raw: unknown = record,
    private readonly deadline?: () => number,
  ) {}

  get messageId(): string {
    return this.record.messageId;
  }

  /** The raw body string. */
  get body(): string {
    return this.record.body;
  }

  /** How many times SQS has delivered this message (1 on the first delivery): `receiveCountOf(record)`. */
  get receiveCount(): number {
    return receiveCountOf(this.record);
  }

  /** FIFO `MessageGroupId`, if any. */
  get groupId(): string | undefined {
    return this.record.attributes?.MessageGroupId;
  }

  /** FIFO `MessageDeduplicationId`, if any. */
  get deduplicationId(): string | undefined {
    return this.record.attributes?.MessageDeduplicationId;
  }

  /** System attributes (`ApproximateReceiveCount`, `SentTimestamp`, ...). */
  get attributes(): SqsRecordAttributes {
    return this.record.attributes ?? {};
  }

  /** User message attributes. */
  get messageAttributes(): Record<string, SqsMessageAttributeValue> {
    return this.record.messageAttributes ?? {};
  }

  /** A message attribute's string value: the SQS one, else the SNS notification's, so both deliveries read alike. */
  messageAttribute(name: string): string | undefined {
    const value = this.record.messageAttributes?.[name]?.stringValue;
    if (value !== undefined || this.envelopes.length === 0) return value;
    const attribute = this.envelope('sns')?.messageAttributes[name];
    return attribute !== undefined && attribute.Type !== 'Binary' ? attribute.Value : undefined;
  }

  /** The envelope of a kind the message came in (`ctx.envelope('sns')?.topicArn`). */
  envelope<K extends SqsEnvelopeKind>(kind: K): Extract<SqsEnvelope, { kind: K }> | undefined {
    return this.envelopes.find((envelope) => envelope.kind === kind) as Extract<SqsEnvelope, { kind: K }>;
  }

  /** Milliseconds the host has left for this attempt (a Lambda's deadline); `undefined` when unbounded. */
  remainingTimeMs(): number | undefined {
    return this.deadline?.();
  }
}

const NO_ENVELOPES: readonly SqsEnvelope[] = Object.freeze([]);

/**
 * How many times SQS has delivered a record, as every path reads it (`ctx.receiveCount`, the record's
 * log line and journal entry, run or not): its `ApproximateReceiveCount`, or 1 (a delivery is at least
 * the first) when that is missing, not a number or below 1.
 */
export function receiveCountOf(record: SqsRecordLike): number {
  const count = Number(record?.attributes?.ApproximateReceiveCount);
  return Number.isFinite(count) && count > 0 ? count : 1;
}

/**
 * True while an enhancer runs for an SQS handler, so global HTTP enhancers can step aside:
 * `if (isSqsContext(context)) return true;`.
 */
export function isSqsContext(context: ArgumentsHost | SqsContext | unknown): boolean {
  if (context instanceof SqsContext) return true;
  const host = context as Partial<ArgumentsHost> | null | undefined;
  return typeof host?.getType === 'function' && host.getType<string>() === SQS_CONTEXT_TYPE;
}
