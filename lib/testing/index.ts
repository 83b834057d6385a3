/**
 * `nestjs-idempotent-sqs/testing`: drive SQS handlers in tests without AWS.
 *
 * @module nestjs-idempotent-sqs/testing
 */
export { SqsTestClient } from './sqs-test-client';
export type {
  SqsTestBatchOptions,
  SqsTestBatchResult,
  SqsTestClientOptions,
  SqsTestSendResult,
} from './sqs-test-client';
export { buildLambdaContext, buildSqsEvent, buildSqsRecord } from './sqs-lambda-record.builder';
export type { SqsTestEnvelope, SqsTestRecordOptions } from './sqs-lambda-record.builder';
export {
  buildCloudEvent,
  buildEventBridgeEvent,
  buildS3Notification,
  buildS3TestEvent,
  buildSnsNotification,
} from './sqs-envelope.builders';
export type {
  CloudEventOptions,
  EventBridgeEventOptions,
  S3NotificationOptions,
  SnsNotificationOptions,
} from './sqs-envelope.builders';
export { md5OfMessageAttributes } from './sqs-message-attributes.md5';
export { describeIdempotencyStore } from './describe-idempotency-store';
export type {
  DescribeIdempotencyStoreOptions,
  IdempotencyStoreFactory,
  IdempotencyStoreFixture,
  StoreConformanceRunner,
} from './kit-case-context';
