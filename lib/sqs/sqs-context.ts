import type { ArgumentsHost } from '@nestjs/common';
import type { IdempotencyState } from '../idempotency/idempotency-state';
import type { SqsMessageAttributeValue, SqsRecordAttributes, SqsRecordLike } from './sqs-record.interface';

/** The context type of SQS handler calls: `executionContext.getType() === 'sqs'`. */
export const SQS_CONTEXT_TYPE = 'sqs';

/** Per-message state shared by guards, interceptors and the handler. */
export type SqsContextState = IdempotencyState;

/**
 * The second argument of every SQS handler: where the message came from and what the pipeline
 * decided so far. Available to guards and interceptors as `context.getArgByIndex(1)`.
 */
export class SqsContext {
  /** Per-message state; `state.idempotencyKey` holds the resolved key of an `@Idempotent()` handler. */
  readonly state: SqsContextState = {};
  /** The routed event type (set once the message is routed). */
  eventType: string | undefined = undefined;

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

  /** How many times SQS has delivered this message (1 on the first delivery). */
  get receiveCount(): number {
    const count = Number(this.record.attributes?.ApproximateReceiveCount);
    return Number.isFinite(count) && count > 0 ? count : 1;
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

  /** The string value of a message attribute, if present. */
  messageAttribute(name: string): string | undefined {
    return this.record.messageAttributes?.[name]?.stringValue;
  }

  /** Milliseconds the host has left for this attempt (a Lambda's deadline); `undefined` when unbounded. */
  remainingTimeMs(): number | undefined {
    return this.deadline?.();
  }
}

/**
 * True when a guard, interceptor or filter is running for an SQS handler, so global HTTP enhancers
 * can step aside.
 *
 * @example
 * ```ts
 * canActivate(context: ExecutionContext) {
 *   if (isSqsContext(context)) return true;
 *   return this.checkJwt(context.switchToHttp().getRequest());
 * }
 * ```
 */
export function isSqsContext(context: ArgumentsHost | SqsContext | unknown): boolean {
  if (context instanceof SqsContext) return true;
  const host = context as Partial<ArgumentsHost> | null | undefined;
  return typeof host?.getType === 'function' && host.getType<string>() === SQS_CONTEXT_TYPE;
}
