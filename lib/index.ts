/**
 * nestjs-idempotent-sqs: consume Amazon SQS in NestJS with typed, validated events and handlers
 * that run once per logical event. This file is the whole public API.
 */

// Idempotency
export { IdempotencyModule } from './idempotency/idempotency.module';
export type { IdempotencyModuleExtras } from './idempotency/idempotency.module-definition';
export type {
  IdempotencyKeyFunction,
  IdempotencyModuleOptions,
  IdempotentOptions,
  StoreErrorPolicy,
} from './idempotency/idempotency-options.interface';
export type { PayloadFingerprintFunction, PayloadFingerprintOption } from './idempotency/payload-fingerprint';
export { Idempotent } from './idempotency/idempotent.decorator';
export { IdempotencyKey } from './idempotency/idempotency-key.decorator';
export { IdempotencyInterceptor } from './idempotency/idempotency.interceptor';
export type { IdempotencyOutcome, IdempotencyState } from './idempotency/idempotency-state';
export {
  IdempotencyConfigurationError,
  IdempotencyError,
  IdempotencyFingerprintMismatchError,
  IdempotencyInProgressError,
  IdempotencyStoreError,
  IdempotencyStoreUnavailableError,
  MissingIdempotencyKeyError,
} from './idempotency/idempotency.errors';
export { SkipMessageException, isSkipMessageException } from './idempotency/skip-message.exception';
export { MissingPeerDependencyError } from './optional-peer';
export type { OptionalPeerName } from './optional-peer';

// Stores
export { AcquireResult, IdempotencyStore } from './stores/idempotency-store.interface';
export type {
  FingerprintClaim,
  FingerprintedAcquireAnswer,
  IdempotencyKeyInspection,
  IdempotencyStoreWarning,
} from './stores/idempotency-store.interface';
export {
  InjectIdempotencyStore,
  getIdempotencyStoreToken,
} from './stores/inject-idempotency-store.decorator';
export { InMemoryIdempotencyStore } from './stores/in-memory-idempotency.store';
export type { InMemoryIdempotencyStoreOptions } from './stores/in-memory-idempotency.store';
export { RedisIdempotencyStore, recommendedIoRedisOptions } from './stores/redis-idempotency.store';
export type {
  IoRedisOptions,
  RedisIdempotencyStoreOptions,
  RedisScriptClient,
  RedisServerCheck,
} from './stores/redis-idempotency.store';

// SQS
export { SqsModule } from './sqs/sqs.module';
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
export { SqsEvent, getSqsEventType } from './sqs/sqs-event.decorator';
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
export type { SqsRecordResult, SqsRecordStatus } from './sqs/record-outcome';
export type { SqsValidationOptions } from './sqs/sqs-message.decoder';
export { InvalidSqsMessageError, SqsFifoOrderError } from './sqs/sqs-message.errors';
export { SqsDispatcher } from './sqs/sqs-dispatcher';
export { SkippedEnvelopeNotice } from './sqs/sqs-record-pipeline';
export type { SqsBatchSource } from './sqs/sqs-record-pipeline';

// Producing
export { SqsProducer } from './sqs/producer/sqs-producer';
export { SqsProducerError, SqsSendError } from './sqs/producer/sqs-producer.errors';
export type {
  SnsClientLike,
  SnsPublishOptions,
  SqsAttributeInput,
  SqsProducerOptions,
  SqsSendFailure,
  SqsSendOptions,
  SqsSentMessage,
} from './sqs/producer/sqs-producer.options';

// Observability: the Idempotency Center
export { IdempotencyStats, NO_HANDLER, UNKNOWN_EVENT_TYPE } from './observability/idempotency-stats.service';
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
export { COUNTER_NAMES } from './observability/idempotency-counters';
export type { CounterName, Counters } from './observability/idempotency-counters';
export type {
  IdempotencyActivityOptions,
  IdempotencyStatsOptions,
  IdempotencyStatsStore,
  MeterProviderLike,
} from './observability/idempotency-stats-store.interface';
export { RedisIdempotencyStatsStore } from './observability/redis-idempotency-stats.store';
export type {
  RedisHashClient,
  RedisIdempotencyStatsStoreOptions,
  RedisStatsPipeline,
} from './observability/redis-idempotency-stats.store';
export { InMemoryIdempotencyStatsStore } from './observability/in-memory-idempotency-stats.store';
export { METRIC_PREFIX } from './observability/idempotency-metrics';
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
export { toSqsRecord } from './sqs/consumer/sqs-message.mapper';
export type { SqsSdkMessage, SqsSdkMessageAttributeValue } from './sqs/consumer/sqs-message.mapper';

// Lambda host
export { createSqsLambdaHandler } from './lambda/create-sqs-lambda-handler';
export type {
  LambdaContextLike,
  SqsBatchResponse,
  SqsLambdaEvent,
  SqsLambdaHandler,
  SqsLambdaHandlerOptions,
} from './lambda/sqs-lambda.types';

// Testing (also at `nestjs-idempotent-sqs/testing`)
export * from './testing';
