import { createHash, randomUUID } from 'node:crypto';
import type { LambdaContextLike, SqsLambdaEvent } from '../lambda/sqs-lambda.types';
import type { SqsMessageAttributeValue, SqsRecordLike } from '../sqs/sqs-record.interface';

/** How to build one test record. */
export interface SqsTestRecordOptions {
  /** Default: a random UUID (a new SQS message). Reuse one to model a redelivery. */
  messageId?: string;
  /** Queue name, written into `eventSourceARN`. Default `'test-queue'`. */
  queue?: string;
  /** `ApproximateReceiveCount`. Default 1. */
  receiveCount?: number;
  /** FIFO `MessageGroupId`. */
  groupId?: string;
  /** FIFO `MessageDeduplicationId`. Default for FIFO records: the SHA-256 of the body. */
  deduplicationId?: string;
  /** Message attributes: strings become `String` attributes, numbers `Number` attributes. */
  messageAttributes?: Record<string, string | number | SqsMessageAttributeValue>;
  /** Region and account in the ARN. */
  region?: string;
  accountId?: string;
}

let sequence = 10_000_000_000_000_000n;

/**
 * Builds a record exactly as an SQS event source mapping delivers it: camelCase record fields,
 * PascalCase system `attributes` with string values, `messageAttributes` with `dataType` and the
 * empty list fields, `md5OfBody`, `eventSource: 'aws:sqs'` and the queue's ARN.
 *
 * @param body an object (sent as JSON) or a raw string (sent as is, e.g. to test invalid JSON)
 */
export function buildSqsRecord(body: unknown, options: SqsTestRecordOptions = {}): SqsRecordLike {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const now = Date.now();
  const queue = options.queue ?? (options.groupId !== undefined ? 'test-queue.fifo' : 'test-queue');
  const region = options.region ?? 'us-east-1';
  const attributes: SqsRecordLike['attributes'] = {
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
  return {
    messageId: options.messageId ?? randomUUID(),
    receiptHandle: `AQEB${randomUUID().replace(/-/g, '')}`,
    body: text,
    attributes,
    messageAttributes: buildMessageAttributes(options.messageAttributes),
    md5OfBody: createHash('md5').update(text).digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:${region}:${options.accountId ?? '123456789012'}:${queue}`,
    awsRegion: region,
  };
}

/** Wraps records into the event a Lambda receives. */
export function buildSqsEvent(records: SqsRecordLike[]): SqsLambdaEvent {
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
  const built: Record<string, SqsMessageAttributeValue> = {};
  for (const [name, value] of Object.entries(attributes)) {
    built[name] =
      typeof value === 'object'
        ? value
        : {
            stringValue: String(value),
            stringListValues: [],
            binaryListValues: [],
            dataType: typeof value === 'number' ? 'Number' : 'String',
          };
  }
  return built;
}
