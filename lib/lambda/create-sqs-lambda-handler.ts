import { DynamicModule, INestApplicationContext, Logger, Type } from '@nestjs/common';
import { DiscoveryService, NestFactory } from '@nestjs/core';
import { SqsConfigurationError } from '../common/sqs-idempotency.error';
import { SqsDispatcher } from '../sqs/sqs-dispatcher';
import { SqsHandlerExplorer } from '../sqs/sqs-handler.explorer';
import { lostConstructorMetadata } from './constructor-metadata.check';
import { unreachableLambdaBindings } from './sqs-lambda-bindings.check';
import { SqsLambdaEventProcessor } from './sqs-lambda-event.processor';
import type { SqsLambdaHandler, SqsLambdaHandlerOptions } from './sqs-lambda.types';
import { SqsLambdaModule } from './sqs-lambda.module';

/**
 * The Lambda entry point of an app: the same module and handlers as the long-running service, fed
 * by an SQS event source mapping (enable `ReportBatchItemFailures` on it). The app bootstraps once
 * per sandbox, on the first invocation; concurrent cold invocations share that bootstrap, and a
 * failed bootstrap is retried by the next invocation. Pollers never start here.
 *
 * Idempotency leases are capped by `context.getRemainingTimeInMillis()`: Lambda kills the attempt
 * at its deadline (no cleanup runs), so the claim must expire by then for the redelivery to run.
 *
 * Each record's queue is the name at the end of its `eventSourceARN`, matched against the
 * configured queues' names and the queue names at the end of their urls (`options.queue` routes
 * every record as one queue). A handler bound to a queue whose url is unset in the function is
 * reported at bootstrap: records of a queue named otherwise cannot reach it. A provider built without
 * its constructor's dependencies (a bundle that lost TypeScript's decorator metadata) fails the
 * bootstrap with a sentence saying so, rather than every record.
 *
 * @example
 * ```ts
 * // lambda.ts
 * export const handler = createSqsLambdaHandler(AppModule);
 * ```
 */
export function createSqsLambdaHandler(
  appModule: Type<unknown> | DynamicModule,
  options: SqsLambdaHandlerOptions = {},
): SqsLambdaHandler {
  let booting: Promise<{ app: INestApplicationContext; processor: SqsLambdaEventProcessor }> | undefined;

  const boot = () => {
    booting ??= (async () => {
      const app = await NestFactory.createApplicationContext(SqsLambdaModule.wrap(appModule), {
        abortOnError: false,
        ...options.nestOptions,
      });
      const lost = lostConstructorMetadata(app.get(DiscoveryService));
      if (lost) {
        await app.close();
        throw new SqsConfigurationError(lost);
      }
      await options.configure?.(app);
      const dispatcher = app.get(SqsDispatcher);
      const processor = new SqsLambdaEventProcessor(dispatcher, options);
      const logger = new Logger('SqsLambda');
      const handlers = app.get(SqsHandlerExplorer).getHandlers();
      for (const warning of unreachableLambdaBindings(dispatcher.declaredQueues, handlers, options.queue)) {
        logger.warn(warning);
      }
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
