import { BaseRpcContext } from '@nestjs/microservices';
import type { SqsEnvelope, SqsEnvelopeKind } from '../sqs/decoding/envelope.interface';
import type { SqsContext, SqsContextState } from '../sqs/sqs-context';
import type {
  SqsMessageAttributeValue,
  SqsRecordAttributes,
  SqsRecordLike,
} from '../sqs/sqs-record.interface';

/**
 * What `@Ctx()` gives an `@EventPattern()` handler of `SqsServer`: Nest's `BaseRpcContext` with what
 * `SqsContext` tells, and `state` (the idempotency key of an `@Idempotent()` handler).
 */
export class SqsRpcContext extends BaseRpcContext<[SqsContext]> {
  constructor(context: SqsContext) {
    super([context]);
  }

  /** The message as `@SqsMessageHandler()` handlers see it. */
  getSqsContext(): SqsContext {
    return this.args[0];
  }

  /** Per-message state; `state.idempotencyKey` holds the resolved key of an `@Idempotent()` handler. */
  get state(): SqsContextState {
    return this.args[0].state;
  }

  get messageId(): string {
    return this.args[0].messageId;
  }

  /** The queue name, as configured in `SqsServer`'s `queues`. */
  get queue(): string {
    return this.args[0].queue;
  }

  /** The routed event type (the pattern the handler matched). */
  get eventType(): string | undefined {
    return this.args[0].eventType;
  }

  /** How many times SQS has delivered this message (1 on the first delivery). */
  get receiveCount(): number {
    return this.args[0].receiveCount;
  }

  /** FIFO `MessageGroupId`, if any. */
  get groupId(): string | undefined {
    return this.args[0].groupId;
  }

  /** FIFO `MessageDeduplicationId`, if any. */
  get deduplicationId(): string | undefined {
    return this.args[0].deduplicationId;
  }

  /** The raw body string. */
  get body(): string {
    return this.args[0].body;
  }

  /** System attributes (`ApproximateReceiveCount`, `SentTimestamp`, ...). */
  get attributes(): SqsRecordAttributes {
    return this.args[0].attributes;
  }

  /** User message attributes. */
  get messageAttributes(): Record<string, SqsMessageAttributeValue> {
    return this.args[0].messageAttributes;
  }

  /** The string value of a message attribute, if present. */
  messageAttribute(name: string): string | undefined {
    return this.args[0].messageAttribute(name);
  }

  /** The envelopes the message came in (SNS, EventBridge, ...), outermost first; empty for a raw message. */
  get envelopes(): readonly SqsEnvelope[] {
    return this.args[0].envelopes;
  }

  /** The envelope of a kind the message came in, if any (`ctx.envelope('sns')?.topicArn`). */
  envelope<K extends SqsEnvelopeKind>(kind: K): Extract<SqsEnvelope, { kind: K }> | undefined {
    return this.args[0].envelope(kind);
  }

  /** The id an envelope gives the event (EventBridge or CloudEvents `id`): the default idempotency key. */
  get envelopeKey(): string | undefined {
    return this.args[0].envelopeKey;
  }

  /** The message in the shape every host shares (an SQS Lambda event record). */
  get record(): SqsRecordLike {
    return this.args[0].record;
  }

  /** The SDK's `Message`, for what this class does not surface. */
  get raw(): unknown {
    return this.args[0].raw;
  }
}
