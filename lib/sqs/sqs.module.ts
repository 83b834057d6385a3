import { Module } from '@nestjs/common';
import { SqsCoreModule } from './sqs-core.module';
import { ConfigurableSqsModule } from './sqs.module-definition';

/**
 * Consumes SQS with `@SqsMessageHandler()` handlers: routing, decoding, validation and the batch
 * rules for the queues the app reads. The Lambda host (`createSqsLambdaHandler`) and the test
 * client (`SqsTestClient`) drive the same core.
 *
 * @example
 * ```ts
 * SqsModule.forRoot({
 *   queues: [{ name: 'orders', url: process.env.ORDERS_QUEUE_URL }],
 *   discriminator: { field: 'type' },
 * })
 * ```
 */
@Module({
  imports: [SqsCoreModule],
  exports: [SqsCoreModule],
})
export class SqsModule extends ConfigurableSqsModule {}
