import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { SqsConsumerEventExplorer } from './sqs/consumer/sqs-consumer-event.explorer';
import { SqsConsumerManager } from './sqs/consumer/sqs-consumer.manager';
import { SqsProducer } from './sqs/producer/sqs-producer';
import { SqsCoreModule } from './sqs/sqs-core.module';
import { SqsTransportBinder } from './sqs/sqs-transport.binder';
import { ConfigurableSqsModule } from './sqs.module-definition';

/**
 * Consumes SQS with `@SqsMessageHandler()` handlers: routing, decoding, validation and the batch rules.
 * A long-running app polls every queue with a `url`; the Lambda host, `SqsTestClient` and `SqsServer`
 * drive the same pipeline; `SqsProducer` sends as its handlers read.
 *
 * @example
 * ```ts
 * SqsModule.forRoot({ queues: [{ name: 'orders', url: process.env.ORDERS_QUEUE_URL }] })
 * ```
 */
@Module({
  imports: [SqsCoreModule, DiscoveryModule],
  providers: [SqsConsumerEventExplorer, SqsConsumerManager, SqsTransportBinder, SqsProducer],
  exports: [SqsCoreModule, SqsConsumerManager, SqsProducer],
})
export class SqsModule extends ConfigurableSqsModule {}
