import { DynamicModule, Module } from '@nestjs/common';
import { ASYNC_OPTION_SHAPE, readOptions } from './common/known-options';
import type { SqsModuleOptions } from './sqs/sqs-module-options.interface';
import { readSqsHostOptions } from './sqs/sqs-options.reader';
import { SqsConfigurationError } from './common/sqs-idempotency.error';
import { DiscoveryModule } from '@nestjs/core';
import { SqsConsumerManager } from './sqs/consumer/sqs-consumer.manager';
import { SqsProducer } from './sqs/producer/sqs-producer';
import { SqsCoreModule } from './sqs/nest/sqs-core.module';
import { SqsTransportBinder } from './sqs/nest/sqs-transport.binder';
import { ConfigurableSqsModule, SQS_OPTIONS_GIVEN } from './sqs.module-definition';
import { requireFactoryMethod } from './common/options-factory.check';

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
  providers: [SqsConsumerManager, SqsTransportBinder, SqsProducer],
  exports: [SqsCoreModule, SqsConsumerManager, SqsProducer],
})
export class SqsModule extends ConfigurableSqsModule {
  /** The module with `options`, a literal or a settings class (read: an unknown or mistyped option stops the app, naming it). */
  static override forRoot(options: SqsModuleOptions = {}): DynamicModule {
    return super.forRoot(readSqsHostOptions(options, 'SqsModule.forRoot()'));
  }

  /** The module with options from a factory, a class or an existing provider (read at start-up). */
  static override forRootAsync(
    options: Parameters<typeof ConfigurableSqsModule.forRootAsync>[0],
  ): DynamicModule {
    const where = 'SqsModule.forRootAsync()';
    const read = readOptions(options, ASYNC_OPTION_SHAPE, where, SqsConfigurationError);
    return requireFactoryMethod(super.forRootAsync(read), read, {
      token: SQS_OPTIONS_GIVEN,
      method: 'createSqsOptions',
      where,
      error: (message) => new SqsConfigurationError(message),
    });
  }
}
