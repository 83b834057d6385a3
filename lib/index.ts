/**
 * nestjs-idempotent-sqs: consume Amazon SQS in NestJS with typed, validated events and handlers
 * that run once per logical event. This file is the root of the public API; the rest is on
 * subpaths: `/testing` (SqsTestClient, record builders, the store conformance kit), `/microservices`
 * (SqsServer), and one per optional backend (`/redis`, `/dynamodb`, `/postgres`).
 */

// Idempotency
export { IdempotencyModule } from './idempotency.module';
export type { IdempotencyModuleExtras, IdempotencyModuleOptions } from './idempotency.module-definition';
export type {
  IdempotencyKeyFunction,
  IdempotentOptions,
  StoreErrorPolicy,
} from './idempotency/idempotency-options.interface';
export type { PayloadFingerprintFunction, PayloadFingerprintOption } from './idempotency/payload-fingerprint';
export { Idempotent } from './idempotency/idempotent.decorator';
export { IdempotencyKey } from './idempotency/idempotency-key.decorator';
export { IdempotencyTransaction } from './idempotency/idempotency-transaction.decorator';
export { IdempotencyInterceptor } from './idempotency/idempotency.interceptor';
export type { IdempotencyOutcome, IdempotencyState } from './idempotency/idempotency-state';
export { IdempotencyConfigurationError, IdempotencyError } from './common/sqs-idempotency.error';
export {
  IdempotencyFingerprintMismatchError,
  IdempotencyInProgressError,
  MissingIdempotencyKeyError,
} from './idempotency/idempotency.errors';
export { IdempotencyStoreError, IdempotencyStoreUnavailableError } from './stores/idempotency-store.errors';
export { SkipMessageException, isSkipMessageException } from './common/skip-message.exception';
export { SqsConfigurationError, SqsIdempotencyError } from './common/sqs-idempotency.error';
export { MissingPeerDependencyError } from './common/optional-peer';
export type { OptionalPeerName } from './common/optional-peer';

// Stores
export { AcquireResult, IdempotencyStore } from './stores/idempotency-store.interface';
export type {
  BatchClaim,
  BatchCompletion,
  FingerprintClaim,
  FingerprintedAcquireAnswer,
  IdempotencyKeyInspection,
  IdempotencyStoreWarning,
  TransactionalClaim,
  TransactionalRunAnswer,
} from './stores/idempotency-store.interface';
export { InjectIdempotencyStore } from './stores/inject-idempotency-store.decorator';
export { InMemoryIdempotencyStore } from './stores/in-memory/in-memory-idempotency.store';
export type { InMemoryIdempotencyStoreOptions } from './stores/in-memory/in-memory-idempotency.store';
// The Redis, DynamoDB and Postgres stores: `nestjs-idempotent-sqs/redis`, `/dynamodb`, `/postgres`.

// SQS
export { SqsModule } from './sqs.module';
export type {
  FifoFailureMode,
  SqsClientConfigLike,
  SqsClientLike,
  SqsClientOption,
  SqsConsumerOptions,
  SqsDiscriminator,
  SqsDispatchOptions,
  SqsModuleOptions,
  SqsQueueOptions,
  SqsRecordLogOptions,
} from './sqs/sqs-module-options.interface';
export { SqsEvent } from './sqs/sqs-event.decorator';
export type { SqsEventOptions } from './sqs/sqs-event.decorator';
export { SqsMessageHandler } from './sqs/sqs-message-handler.decorator';
export { SqsFallback, SqsFallbackHandler } from './sqs/sqs-fallback.decorator';
export type { SqsBodyDecoder, SqsBodyDecoderFunction } from './sqs/decoding/body-decoder';
export type {
  SqsCloudEventsEnvelope,
  SqsEnvelope,
  SqsEnvelopeKind,
  SqsEnvelopeOption,
  SqsEventBridgeEnvelope,
  SqsS3Envelope,
  SqsSnsEnvelope,
  SqsSnsMessageAttribute,
} from './sqs/decoding/envelope.interface';
export type { SqsMessageHandlerOptions } from './sqs/sqs-message-handler.decorator';
export { SqsContext, isSqsContext, SQS_CONTEXT_TYPE } from './sqs/sqs-context';
export type { SqsContextState } from './sqs/sqs-context';
export type {
  SqsLambdaRecord,
  SqsMessageAttributeValue,
  SqsRecordAttributes,
  SqsRecordLike,
} from './sqs/sqs-record.interface';
export type { SqsRecordResult, SqsRecordStatus } from './idempotency/record-outcome';
export type { SqsValidationOptions } from './sqs/sqs-message.decoder';
export { InvalidSqsMessageError, SqsFifoOrderError } from './sqs/sqs-message.errors';

// Producing
export { SqsProducer } from './sqs/producer/sqs-producer';
export { SqsProducerError, SqsSendError } from './sqs/producer/sqs-producer.errors';
export type { SnsClientLike, SqsProducerOptions } from './sqs/sqs-module-options.interface';
export type {
  SnsPublishOptions,
  SqsAttributeInput,
  SqsSendFailure,
  SqsSendOptions,
  SqsSentMessage,
} from './sqs/producer/sqs-producer.options';

// Observability: the Idempotency Center
export { IdempotencyStats } from './observability/idempotency-stats.service';
export type {
  EventTypeStats,
  HandlerStats,
  IdempotencyActivitySnapshot,
  IdempotencyStatsSnapshot,
} from './observability/idempotency-stats.service';
export type { RecentRecord, TrendCount, UnroutedEventType } from './observability/record-journal';
export type { ClaimLatencySummary } from './observability/claim-latency';
export type { MinuteDelta } from './observability/minute-series';
export type { ActivityReport, FleetActivity, InstanceHeartbeat } from './observability/fleet-activity';
export type { CounterName, Counters } from './idempotency/idempotency-counters';
export type {
  IdempotencyActivityOptions,
  IdempotencyStatsOptions,
  IdempotencyStatsStore,
  MeterProviderLike,
} from './observability/idempotency-stats-store.interface';
export { InMemoryIdempotencyStatsStore } from './observability/in-memory-idempotency-stats.store';
export { RecordTimingInterceptor } from './observability/record-timing.interceptor';
export { IdempotencyCenterModule } from './center/idempotency-center.module';
export type { IdempotencyCenterOptions } from './center/idempotency-center-options.interface';
export type {
  CenterEventType,
  CenterKeyLookup,
  CenterKeyState,
  CenterOverview,
  CenterRecords,
  CenterStoreHealth,
  CenterTrend,
} from './center/idempotency-center.api';

// Polling host (sqs-consumer)
export { SqsConsumerManager } from './sqs/consumer/sqs-consumer.manager';
export type { SqsPollingConsumer } from './sqs/consumer/sqs-consumer.manager';
export { SqsConsumerEventHandler } from './sqs/consumer/sqs-consumer-event.decorator';
export type { SqsConsumerEventName } from './sqs/consumer/sqs-consumer-event.decorator';

// Lambda host
export { createSqsLambdaHandler } from './lambda/create-sqs-lambda-handler';
export type {
  LambdaContextLike,
  SqsBatchResponse,
  SqsLambdaEvent,
  SqsLambdaHandler,
  SqsLambdaHandlerOptions,
} from './lambda/sqs-lambda.types';
