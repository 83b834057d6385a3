import { randomUUID } from 'node:crypto';
import type { Type } from '@nestjs/common';
import { getSqsEventType } from '../sqs/sqs-event.decorator';
import { SqsConfigurationError } from '../common/sqs-idempotency.error';
import type {
  SqsCloudEventsEnvelope,
  SqsEventBridgeEnvelope,
  SqsS3Envelope,
  SqsSnsEnvelope,
} from '../sqs/sqs-envelope.interface';

/**
 * Bodies as AWS services write them into a queue, for tests of queues that take envelopes
 * (`envelope: 'sns'`, ...). Each returns the envelope as an object: send it as the body
 * (`sqs.send(buildSnsNotification(event))`), or let `send(event, { envelope: 'sns' })` wrap it.
 * Defaults are fresh ids and the current time, so two calls are two deliveries.
 */

/** Fields of an SNS notification (as `ctx.envelope('sns')` reads them back). */
export interface SnsNotificationOptions extends Partial<
  Pick<SqsSnsEnvelope, 'topicArn' | 'subject' | 'timestamp' | 'sequenceNumber'>
> {
  /** SNS's id of the publication. Default: a random UUID. */
  messageId?: string;
  /** SNS message attributes: strings become `String`, numbers `Number`, buffers `Binary`. */
  messageAttributes?: Record<string, string | number | Uint8Array>;
}

/**
 * An SNS notification, as SNS delivers a publication to a queue subscribed without raw message
 * delivery. `message` is the published message: a string as it is, anything else as JSON.
 */
export function buildSnsNotification(
  message: unknown,
  options: SnsNotificationOptions = {},
): Record<string, unknown> {
  const topicArn = options.topicArn ?? 'arn:aws:sns:us-east-1:123456789012:test-topic';
  const notification: Record<string, unknown> = {
    Type: 'Notification',
    MessageId: options.messageId ?? randomUUID(),
    TopicArn: topicArn,
    Subject: options.subject ?? null,
    Message: typeof message === 'string' ? message : JSON.stringify(message),
    Timestamp: options.timestamp ?? new Date().toISOString(),
    SignatureVersion: '1',
    Signature: 'EXAMPLE',
    SigningCertURL:
      'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0000000000000000000000.pem',
    UnsubscribeURL: `https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=${topicArn}:${randomUUID()}`,
  };
  if (options.sequenceNumber !== undefined) notification.SequenceNumber = options.sequenceNumber;
  if (options.messageAttributes !== undefined) {
    notification.MessageAttributes = Object.fromEntries(
      Object.entries(options.messageAttributes).map(([name, value]) => {
        const { dataType, encoded } = typedAttribute(value);
        return [name, { Type: dataType, Value: encoded }];
      }),
    );
  }
  return notification;
}

/** A message attribute's type and value as SQS and SNS carry it: a string, a number, or bytes in base64. */
export function typedAttribute(value: string | number | Uint8Array): { dataType: string; encoded: string } {
  if (value instanceof Uint8Array) {
    const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    return { dataType: 'Binary', encoded: bytes.toString('base64') };
  }
  return { dataType: typeof value === 'number' ? 'Number' : 'String', encoded: String(value) };
}

/** Fields of an EventBridge event (as `ctx.envelope('eventbridge')` reads them back). */
export interface EventBridgeEventOptions extends Partial<
  Pick<SqsEventBridgeEnvelope, 'source' | 'account' | 'region' | 'time' | 'resources'>
> {
  /** The `detail-type`. Default: the event type of `detail`'s class, else its `type` field. */
  detailType?: string;
  /** EventBridge's id of the event (the default idempotency key). Default: a random UUID. */
  id?: string;
}

/** An EventBridge event whose `detail` is the event, as a rule targeting a queue delivers it. */
export function buildEventBridgeEvent(
  detail: object,
  options: EventBridgeEventOptions = {},
): Record<string, unknown> {
  return {
    version: '0',
    id: options.id ?? randomUUID(),
    'detail-type': options.detailType ?? typeOf(detail, 'buildEventBridgeEvent', 'detailType'),
    source: options.source ?? 'com.example.tests',
    account: options.account ?? '123456789012',
    time: options.time ?? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: options.region ?? 'us-east-1',
    resources: options.resources ?? [],
    detail,
  };
}

/** Fields of a CloudEvent (as `ctx.envelope('cloudevents')` reads them back). */
export interface CloudEventOptions extends Partial<
  Pick<SqsCloudEventsEnvelope, 'source' | 'subject' | 'time' | 'datacontenttype' | 'extensions'>
> {
  /** The CloudEvents `type`. Default: the event type of `data`'s class, else its `type` field. */
  type?: string;
  /** The CloudEvents `id` (the default idempotency key). Default: a random UUID. */
  id?: string;
}

/** The attributes `buildCloudEvent` writes itself, and those of them its options set. */
const OPTION_ATTRIBUTES = new Set(['id', 'source', 'type', 'time', 'subject', 'datacontenttype']);
const BUILT_ATTRIBUTES = new Set([...OPTION_ATTRIBUTES, 'specversion', 'data', 'data_base64']);

/**
 * A CloudEvent in structured mode. `data` is the event: a `Buffer` goes into `data_base64`,
 * anything else into `data`.
 */
export function buildCloudEvent(data: unknown, options: CloudEventOptions = {}): Record<string, unknown> {
  const binary = Buffer.isBuffer(data);
  for (const name of Object.keys(options.extensions ?? {})) {
    // An extension of one of these names would silently replace what the builder writes.
    if (BUILT_ATTRIBUTES.has(name)) {
      throw new SqsConfigurationError(
        `buildCloudEvent: the extension "${name}" is a CloudEvents attribute the builder writes; ` +
          (OPTION_ATTRIBUTES.has(name) ? `set it with the option ${name}.` : 'it cannot be an extension.'),
      );
    }
  }
  return {
    specversion: '1.0',
    id: options.id ?? randomUUID(),
    source: options.source ?? '/tests',
    type: options.type ?? typeOf(data, 'buildCloudEvent', 'type'),
    time: options.time ?? new Date().toISOString(),
    ...options.extensions,
    ...(options.subject !== undefined && { subject: options.subject }),
    datacontenttype: options.datacontenttype ?? (binary ? 'application/octet-stream' : 'application/json'),
    ...(binary ? { data_base64: data.toString('base64') } : { data }),
  };
}

/** Fields of an S3 event notification (as `ctx.envelope('s3')` reads them back). */
export interface S3NotificationOptions extends Partial<
  Pick<SqsS3Envelope, 'bucket' | 'region' | 'eventTime'>
> {
  /**
   * The object's key as it is in the bucket (`photos/cat 1.jpg`, `a+b.txt`). The notification carries
   * it URL-encoded as S3 writes it (`photos/cat+1.jpg`, `a%2Bb.txt`), and the handler receives it
   * decoded again, as with a real notification.
   */
  key: string;
  /** Default `'ObjectCreated:Put'`. */
  eventName?: string;
  /** Default: a fresh hexadecimal value. */
  sequencer?: string;
  size?: number;
  eTag?: string;
}

let sequencer = 0x0055aed6dcd90281e5n;

/** An S3 event notification of one object event, as S3 delivers it to a queue. */
export function buildS3Notification(options: S3NotificationOptions): Record<string, unknown> {
  const bucket = options.bucket ?? 'test-bucket';
  const region = options.region ?? 'us-east-1';
  return {
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        awsRegion: region,
        eventTime: options.eventTime ?? new Date().toISOString(),
        eventName: options.eventName ?? 'ObjectCreated:Put',
        userIdentity: { principalId: 'AWS:AIDAEXAMPLE' },
        requestParameters: { sourceIPAddress: '127.0.0.1' },
        responseElements: {
          'x-amz-request-id': 'EXAMPLE123456789',
          'x-amz-id-2': 'EXAMPLE123/abcdefghijklmn',
        },
        s3: {
          s3SchemaVersion: '1.0',
          configurationId: 'tests',
          bucket: { name: bucket, ownerIdentity: { principalId: 'EXAMPLE' }, arn: `arn:aws:s3:::${bucket}` },
          object: {
            // Form URL-encoded as S3 writes it (a space is `+`, a `+` is `%2B`), the `/` between folders kept.
            key: options.key
              .split('/')
              .map((segment) => encodeURIComponent(segment).replace(/%20/g, '+'))
              .join('/'),
            size: options.size ?? 0,
            eTag: options.eTag ?? 'd41d8cd98f00b204e9800998ecf8427e',
            sequencer: options.sequencer ?? (++sequencer).toString(16).toUpperCase().padStart(18, '0'),
          },
        },
      },
    ],
  };
}

/** The `s3:TestEvent` S3 sends to a queue when a bucket notification is configured. */
export function buildS3TestEvent(bucket = 'test-bucket'): Record<string, unknown> {
  return {
    Service: 'Amazon S3',
    Event: 's3:TestEvent',
    Time: new Date().toISOString(),
    Bucket: bucket,
    RequestId: 'EXAMPLE123456789',
    HostId: 'EXAMPLE123/abcdefghijklmn',
  };
}

/** The event type of an event: its class's, else its `type` field. */
function typeOf(event: unknown, builder: string, option: string): string {
  const constructor = (event as object | null)?.constructor;
  if (typeof constructor === 'function' && constructor !== Object)
    return getSqsEventType(constructor as Type<unknown>);
  const type = (event as { type?: unknown } | null)?.type;
  if (typeof type === 'string' && type.length > 0) return type;
  throw new SqsConfigurationError(
    `${builder}(): give options.${option}, or an event class instance or an event with a "type" field`,
  );
}
