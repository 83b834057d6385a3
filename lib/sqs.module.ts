import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { SqsConsumerEventExplorer } from './sqs/consumer/sqs-consumer-event.explorer';
import { SqsConsumerManager } from './sqs/consumer/sqs-consumer.manager';
import { SqsProducer } from './sqs/producer/sqs-producer';
import { SqsCoreModule } from './sqs/sqs-core.module';
import { SqsTransportBinder } from './sqs/sqs-transport.binder';
import { ConfigurableSqsModule } from './sqs.module-definition';

/**
 * Consumes SQS with `@SqsMessageHandler()` handlers: routing, decoding, validation and the batch
 * rules for the queues the app reads. In a long-running app it polls every queue that has a `url`
 * with sqs-consumer (`SqsConsumerManager`), from bootstrap to shutdown; the Lambda host
 * (`createSqsLambdaHandler`), the test client (`SqsTestClient`) and the microservice transport
 * (`SqsServer`, for the types no `@EventPattern()` handles) drive the same core. `SqsProducer`
 * sends events to its queues (and SNS topics) as its handlers read them.
 *
 * @example
 * ```ts
 * SqsModule.forRoot({
 *   queues: [{ name: 'orders', url: process.env.ORDERS_QUEUE_URL, visibilityTimeout: 30 }],
 *   client: { region: 'eu-west-1' },
 * })
 * ```
 */
@Module({
  imports: [SqsCoreModule, DiscoveryModule],
  providers: [SqsConsumerEventExplorer, SqsConsumerManager, SqsTransportBinder, SqsProducer],
  exports: [SqsCoreModule, SqsConsumerManager, SqsProducer],
})
export class SqsModule extends ConfigurableSqsModule {}
