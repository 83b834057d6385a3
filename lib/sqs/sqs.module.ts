import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { SqsConsumerEventExplorer } from './consumer/sqs-consumer-event.explorer';
import { SqsConsumerManager } from './consumer/sqs-consumer.manager';
import { SqsCoreModule } from './sqs-core.module';
import { SqsTransportBinder } from './sqs-transport.binder';
import { ConfigurableSqsModule } from './sqs.module-definition';

/**
 * Consumes SQS with `@SqsMessageHandler()` handlers: routing, decoding, validation and the batch
 * rules for the queues the app reads. In a long-running app it polls every queue that has a `url`
 * with sqs-consumer (`SqsConsumerManager`), from bootstrap to shutdown; the Lambda host
 * (`createSqsLambdaHandler`), the test client (`SqsTestClient`) and the microservice transport
 * (`SqsServer`, for the types no `@EventPattern()` handles) drive the same core.
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
  providers: [SqsConsumerEventExplorer, SqsConsumerManager, SqsTransportBinder],
  exports: [SqsCoreModule, SqsConsumerManager],
})
export class SqsModule extends ConfigurableSqsModule {}
