/**
 * `nestjs-idempotent-sqs/testing`: drive SQS handlers in tests without AWS.
 */
export { SqsTestClient } from './sqs-test-client';
export type {
  SqsTestBatchOptions,
  SqsTestBatchResult,
  SqsTestClientOptions,
  SqsTestSendResult,
} from './sqs-test-client';
export { buildLambdaContext, buildSqsEvent, buildSqsRecord } from './sqs-lambda-record.builder';
export type { SqsTestRecordOptions } from './sqs-lambda-record.builder';
export { describeIdempotencyStore } from './describe-idempotency-store';
export type {
  DescribeIdempotencyStoreOptions,
  IdempotencyStoreFactory,
  IdempotencyStoreFixture,
  StoreConformanceRunner,
} from './describe-idempotency-store';
