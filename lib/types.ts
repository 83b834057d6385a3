/**
 * `nestjs-idempotent-sqs/types`: the types that spell out parts of options and results (option
 * members, record shapes, envelopes, body decoders, the hosts' smaller types).
 *
 * @module nestjs-idempotent-sqs/types
 */
export type { OptionalPeerName } from './common/optional-peer';
export type { StoreErrorPolicy } from './idempotency/idempotency-options.interface';
export type { PayloadFingerprintFunction, PayloadFingerprintOption } from './idempotency/payload-fingerprint';
export type { IdempotencyOutcome, IdempotencyState } from './idempotency/idempotency-state';
export type {
  FifoFailureMode,
  SnsClientLike,
  SqsClientConfigLike,
  SqsClientLike,
  SqsClientOption,
  SqsConsumerOptions,
  SqsDiscriminator,
  SqsRecordLogOptions,
  SqsTracingOptions,
  SqsValidationOptions,
} from './sqs/sqs-module-options.interface';
export type { SqsBodyDecoder, SqsBodyDecoderFunction } from './sqs/sqs-body.decoder';
export type {
  SqsCloudEventsEnvelope,
  SqsEnvelope,
  SqsEnvelopeKind,
  SqsEnvelopeOption,
  SqsEventBridgeEnvelope,
  SqsS3Envelope,
  SqsSnsEnvelope,
  SqsSnsMessageAttribute,
} from './sqs/sqs-envelope.interface';
export type {
  SqsLambdaRecord,
  SqsMessageAttributeValue,
  SqsRecordAttributes,
} from './sqs/sqs-record.interface';
export type {
  SnsPublishOptions,
  SqsAttributeInput,
  SqsSendFailure,
} from './sqs/producer/sqs-producer.options';
export type { SqsConsumerEventName } from './sqs/consumer/sqs-consumer-event.decorator';
export type { SqsPollingConsumer } from './sqs/consumer/sqs-consumer.manager';
export type { LambdaContextLike } from './lambda/sqs-lambda.types';
