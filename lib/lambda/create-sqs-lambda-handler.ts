import { DynamicModule, INestApplicationContext, Logger, Module, Type } from '@nestjs/common';
import { DiscoveryService, NestFactory } from '@nestjs/core';
import { SqsConfigurationError } from '../common/sqs-idempotency.error';
import { SqsQueueRegistry } from '../sqs/nest/sqs-queue.registry';
import { SqsHandlerExplorer } from '../sqs/nest/sqs-handler.explorer';
import { lostConstructorMetadata } from './constructor-metadata.check';
import { unreachableLambdaBindings } from './sqs-lambda-bindings.check';
import { sandboxOnlyStore } from './sandbox-store.check';
import { SqsLambdaEventProcessor } from './sqs-lambda-event.processor';
import type { SqsLambdaHandler, SqsLambdaHandlerOptions } from './sqs-lambda.types';
import { DISPATCH_OPTION_SHAPE } from '../sqs/sqs-options.reader';
import { OptionShape, readOptions } from '../common/known-options';
import { SQS_LAMBDA_HOST } from '../sqs/sqs.constants';
import { SqsCoreModule } from '../sqs/nest/sqs-core.module';

/** What each option of `createSqsLambdaHandler()` takes (read when it is called). */
export const LAMBDA_OPTION_SHAPE: OptionShape<SqsLambdaHandlerOptions> = {
  ...DISPATCH_OPTION_SHAPE,
  queue: 'string',
  nestOptions: 'object',
  configure: 'function',
};

/** A Lambda sandbox's root: the user's module, the record pipeline, and the flag that keeps pollers off. */
@Module({})
class SqsLambdaModule {}

/**
 * The Lambda entry point of an app (enable `ReportBatchItemFailures` on the event source mapping):
 * bootstraps once per sandbox, never polls, caps leases by the time left (a timed-out attempt runs no
 * cleanup), and routes each record by the queue name in its ARN.
 *
 * @example
 * ```ts
 * export const handler = createSqsLambdaHandler(AppModule);
 * ```
 */
export function createSqsLambdaHandler(
  appModule: Type<unknown> | DynamicModule,
  given: SqsLambdaHandlerOptions = {},
): SqsLambdaHandler {
  const where = 'createSqsLambdaHandler() options';
  const options = readOptions(given, LAMBDA_OPTION_SHAPE, where, SqsConfigurationError);
  let booting: Promise<{ app: INestApplicationContext; processor: SqsLambdaEventProcessor }> | undefined;

  const boot = () => {
    booting ??= (async () => {
      const root: DynamicModule = {
        module: SqsLambdaModule,
        global: true,
        imports: [appModule, SqsCoreModule],
        providers: [{ provide: SQS_LAMBDA_HOST, useValue: true }],
        exports: [SQS_LAMBDA_HOST],
      };
      const app = await NestFactory.createApplicationContext(root, {
        abortOnError: false,
        ...options.nestOptions,
      });
      const lost = lostConstructorMetadata(app.get(DiscoveryService));
      if (lost) {
        await app.close();
        throw new SqsConfigurationError(lost);
      }
      await options.configure?.(app);
      const dispatcher = app.get(SqsQueueRegistry);
      const processor = new SqsLambdaEventProcessor(dispatcher, options);
      const logger = new Logger('SqsLambda');
      const handlers = app.get(SqsHandlerExplorer).getHandlers();
      for (const warning of unreachableLambdaBindings(dispatcher.declaredQueues, handlers, options.queue)) {
        logger.warn(warning);
      }
      const sandboxOnly = sandboxOnlyStore(app);
      if (sandboxOnly) logger.warn(sandboxOnly);
      return { app, processor };
    })().catch((error: unknown) => {
      booting = undefined;
      throw error;
    });
    return booting;
  };

  const handler = (async (event, context) => {
    const { processor } = await boot();
    return (await processor.process(event, context)).response;
  }) as SqsLambdaHandler;
  handler.getApp = async () => (await boot()).app;
  handler.close = async () => {
    const current = booting;
    booting = undefined;
    if (current) await (await current).app.close();
  };
  return handler;
}
