/**
 * nestjs-idempotent-sqs: consume SQS in NestJS with typed, validated events, each handled once. The
 * root entry holds what every app uses; the rest is on subpaths: `/center`, `/stores` (a store of your
 * own), `/types`, `/testing`, `/microservices`, `/redis`, `/dynamodb`, `/postgres`.
 *
 * @module nestjs-idempotent-sqs
 */

// Idempotency
export { IdempotencyModule } from './idempotency.module';
export type { IdempotencyModuleExtras, IdempotencyModuleOptions } from './idempotency.module-definition';
export type { IdempotencyKeyFunction, IdempotentOptions } from './idempotency/idempotency-options.interface';
export { Idempotent } from './idempotency/idempotent.decorator';
export { IdempotencyKey } from './idempotency/idempotency-key.decorator';
export { IdempotencyTransaction } from './idempotency/idempotency-transaction.decorator';
export { IdempotencyInterceptor } from './idempotency/idempotency.interceptor';
export { SkipMessageException, isSkipMessageException } from './common/skip-message.exception';

// Errors
export {
  IdempotencyConfigurationError,
  IdempotencyError,
  SqsConfigurationError,
  SqsIdempotencyError,
} from './common/sqs-idempotency.error';
export {
  IdempotencyFingerprintMismatchError,
  IdempotencyInProgressError,
  MissingIdempotencyKeyError,
} from './idempotency/idempotency.errors';
export { IdempotencyStoreError, IdempotencyStoreUnavailableError } from './stores/idempotency-store.errors';
export { MissingPeerDependencyError } from './common/optional-peer';
export { InvalidSqsMessageError, SqsFifoOrderError, SqsRecordTimeoutError } from './sqs/sqs-message.errors';
export { SqsProducerError, SqsSendError } from './sqs/producer/sqs-producer.errors';

// Stores (the protocol for a store of your own: `/stores`; Redis, DynamoDB, Postgres: their subpaths)
export { IdempotencyStore } from './stores/idempotency-store.interface';
export { InjectIdempotencyStore } from './stores/inject-idempotency-store.decorator';
export { InMemoryIdempotencyStore } from './stores/in-memory/in-memory-idempotency.store';

// SQS
export { SqsModule } from './sqs.module';
export type {
  SqsDispatchOptions,
  SqsModuleOptions,
  SqsProducerOptions,
  SqsQueueOptions,
} from './sqs/sqs-module-options.interface';
export { SqsEvent } from './sqs/sqs-event.decorator';
export type { SqsEventOptions } from './sqs/sqs-event.decorator';
export { SqsMessageHandler } from './sqs/sqs-message-handler.decorator';
export type { SqsMessageHandlerOptions } from './sqs/sqs-message-handler.decorator';
export { SqsBatchHandler } from './sqs/sqs-batch-handler.decorator';
export { SqsBatchContext, SqsBatchFailures } from './sqs/sqs-batch-handler.context';
export { SqsFallback, SqsFallbackHandler } from './sqs/sqs-fallback.decorator';
export { SqsContext, isSqsContext, SQS_CONTEXT_TYPE } from './sqs/sqs-context';
export type { SqsContextState } from './sqs/sqs-context';
export type { SqsRecordLike } from './sqs/sqs-record.interface';
export type { SqsRecordResult, SqsRecordStatus } from './idempotency/record-outcome';

// Hosts: producing, polling, Lambda
export { SqsProducer } from './sqs/producer/sqs-producer';
export type { SqsSendOptions, SqsSentMessage } from './sqs/producer/sqs-producer.options';
export { SqsConsumerManager } from './sqs/consumer/sqs-consumer.manager';
export { SqsConsumerEventHandler } from './sqs/consumer/sqs-consumer-event.decorator';
export { createSqsLambdaHandler } from './lambda/create-sqs-lambda-handler';
export type {
  SqsBatchResponse,
  SqsLambdaEvent,
  SqsLambdaHandler,
  SqsLambdaHandlerOptions,
} from './lambda/sqs-lambda.types';
