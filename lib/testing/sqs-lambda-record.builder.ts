import { SqsConfigurationError } from '../common/sqs-idempotency.error';
import { createHash, randomUUID } from 'node:crypto';
import type { LambdaContextLike } from '../lambda/sqs-lambda.types';
import type { SqsLambdaRecord, SqsMessageAttributeValue, SqsRecordLike } from '../sqs/sqs-record.interface';
import {
  buildCloudEvent,
  buildEventBridgeEvent,
  buildSnsNotification,
  typedAttribute,
} from './sqs-envelope.builders';
import { md5OfMessageAttributes } from './sqs-message-attributes.md5';

/**
 * The envelope `buildSqsRecord` wraps a body in, with the builders' defaults (build it yourself
 * with `buildSnsNotification()` and its siblings for other fields).
 */
export type SqsTestEnvelope =
  'sns' | 'eventbridge' | 'cloudevents' | readonly ['sns', 'eventbridge' | 'cloudevents'];

/** How to build one test record. */
export interface SqsTestRecordOptions {
  /** Default: a random UUID (a new SQS message). Reuse one to model a redelivery. */
  messageId?: string;
  /** Queue name, written into `eventSourceARN`. Default `'test-queue'` (`'test-queue.fifo'` with a `groupId`). */
  queue?: string;
  /** `ApproximateReceiveCount`. Default 1. */
  receiveCount?: number;
  /** FIFO `MessageGroupId`. */
  groupId?: string;
  /** FIFO `MessageDeduplicationId`. Default for FIFO records: the SHA-256 of the body. */
  deduplicationId?: string;
  /**
   * Message attributes: strings become `String` attributes, numbers `Number` attributes, a
   * `Buffer` (or any `Uint8Array`) a `Binary` attribute (its `binaryValue` in base64, as Lambda
   * delivers it). The record gets the `md5OfMessageAttributes` SQS would compute.
   */
  messageAttributes?: Record<string, string | number | Uint8Array | SqsMessageAttributeValue>;
  /** Region and account in the ARN. */
  region?: string;
  accountId?: string;
  /** Wrap the body in an envelope first (the event type of an EventBridge event or CloudEvent is the body's class's). */
  envelope?: SqsTestEnvelope;
}

let sequence = 10_000_000_000_000_000n;

/**
 * Builds a record exactly as an SQS event source mapping delivers it: camelCase record fields,
 * PascalCase system `attributes` with string values, `messageAttributes` with `dataType` and the
 * empty list fields, `md5OfBody` and (with attributes) `md5OfMessageAttributes`,
 * `eventSource: 'aws:sqs'` and the queue's ARN. The result is an `SQSRecord` of `aws-lambda`.
 *
 * @param body an object (sent as JSON) or a raw string (sent as is: text, base64, invalid JSON)
 */
export function buildSqsRecord(body: unknown, options: SqsTestRecordOptions = {}): SqsLambdaRecord {
  const wrapped = options.envelope === undefined ? body : wrap(body, options.envelope);
  const text = typeof wrapped === 'string' ? wrapped : JSON.stringify(wrapped);
  const now = Date.now();
  const queue = options.queue ?? (options.groupId !== undefined ? 'test-queue.fifo' : 'test-queue');
  const region = options.region ?? 'us-east-1';
  const attributes: SqsLambdaRecord['attributes'] = {
    ApproximateReceiveCount: String(options.receiveCount ?? 1),
    SentTimestamp: String(now),
    SenderId: 'AIDAIENQZJOLO23YVJ4VO',
    ApproximateFirstReceiveTimestamp: String(now),
  };
  if (options.groupId !== undefined) {
    attributes.MessageGroupId = options.groupId;
    attributes.MessageDeduplicationId =
      options.deduplicationId ?? createHash('sha256').update(text).digest('hex');
    attributes.SequenceNumber = String(sequence++);
  } else if (options.deduplicationId !== undefined) {
    attributes.MessageDeduplicationId = options.deduplicationId;
  }
  const messageAttributes = buildMessageAttributes(options.messageAttributes);
  const md5OfAttributes = md5OfMessageAttributes(messageAttributes);
  return {
    messageId: options.messageId ?? randomUUID(),
    receiptHandle: `AQEB${randomUUID().replace(/-/g, '')}`,
    body: text,
    attributes,
    messageAttributes,
    md5OfBody: createHash('md5').update(text).digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:${region}:${options.accountId ?? '123456789012'}:${queue}`,
    awsRegion: region,
    ...(md5OfAttributes !== undefined && { md5OfMessageAttributes: md5OfAttributes }),
  };
}

function wrap(body: unknown, envelope: SqsTestEnvelope): unknown {
  const [outer, inner] = typeof envelope === 'string' ? [envelope, undefined] : envelope;
  const event = inner === undefined ? body : wrap(body, inner);
  if (outer === 'sns') return buildSnsNotification(event);
  if (outer === 'eventbridge') return buildEventBridgeEvent(event as object);
  if (outer === 'cloudevents') return buildCloudEvent(event);
  throw new SqsConfigurationError(`buildSqsRecord(): unknown envelope ${JSON.stringify(envelope)}`);
}

/** Wraps records into the event a Lambda receives (an `SQSEvent` of `aws-lambda` for built records). */
export function buildSqsEvent<R extends SqsRecordLike>(records: R[]): { Records: R[] } {
  return { Records: records };
}

/** A Lambda context whose deadline is `remainingTimeMs` from now. */
export function buildLambdaContext(remainingTimeMs = 30_000): LambdaContextLike {
  const deadline = Date.now() + remainingTimeMs;
  return {
    awsRequestId: randomUUID(),
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
}

function buildMessageAttributes(
  attributes: SqsTestRecordOptions['messageAttributes'] = {},
): Record<string, SqsMessageAttributeValue> {
  return Object.fromEntries(
    Object.entries(attributes).map(([name, value]) => {
      if (typeof value === 'object' && !(value instanceof Uint8Array)) return [name, value];
      const { dataType, encoded } = typedAttribute(value);
      const field = dataType === 'Binary' ? 'binaryValue' : 'stringValue';
      return [name, { [field]: encoded, stringListValues: [], binaryListValues: [], dataType }];
    }),
  );
}
