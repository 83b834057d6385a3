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
import { SandboxBoot } from './sandbox-boot';

/** What each option of `createSqsLambdaHandler()` takes (read when it is called). */
export const LAMBDA_OPTION_SHAPE: OptionShape<SqsLambdaHandlerOptions> = {
  ...DISPATCH_OPTION_SHAPE,
  queue: 'string',
  nestOptions: 'object',
  configure: 'function',
  bootAtInit: 'boolean',
};

/** A Lambda sandbox's root: the user's module, the record pipeline, and the flag that keeps pollers off. */
@Module({})
class SqsLambdaModule {}

/**
 * The Lambda entry point of an app (enable `ReportBatchItemFailures` on the event source mapping):
 * bootstraps once per sandbox, in Lambda starting when it is called (its INIT phase, where the module
 * that creates it runs; elsewhere, or with `bootAtInit: false`, on the first invocation), never polls,
 * caps leases by the time left (a timed-out attempt runs no cleanup), and routes each record by the
 * queue name in its ARN. A test that invokes a handler closes it (`afterAll(() => handler.close())`).
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
  const sandbox = new SandboxBoot(() => bootLambdaApp(appModule, options));
  // INIT exists in Lambda only (its runtime sets AWS_LAMBDA_FUNCTION_NAME): a test or a script that imports
  // the handler boots when it first uses it, so no app is left booting between a test runner's hooks.
  if (options.bootAtInit ?? process.env.AWS_LAMBDA_FUNCTION_NAME !== undefined) sandbox.start();

  const handler = (async (event, context) => {
    const { processor } = sandbox.ready ?? (await sandbox.get());
    return (await processor.process(event, context)).response;
  }) as SqsLambdaHandler;
  handler.getApp = async () => (await sandbox.get()).app;
  handler.close = async () => {
    await (await sandbox.forget())?.app.close();
  };
  return handler;
}

/** One boot: the app in Lambda's root module, checked, configured, with its batch processor; closed if a step fails. */
async function bootLambdaApp(
  appModule: Type<unknown> | DynamicModule,
  options: SqsLambdaHandlerOptions,
): Promise<{ app: INestApplicationContext; processor: SqsLambdaEventProcessor }> {
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
  try {
    const lost = lostConstructorMetadata(app.get(DiscoveryService));
    if (lost) throw new SqsConfigurationError(lost);
    await options.configure?.(app);
    const dispatcher = app.get(SqsQueueRegistry);
    const processor = new SqsLambdaEventProcessor(dispatcher, options);
    const logger = new Logger('SqsLambda');
    const explorer = app.get(SqsHandlerExplorer);
    const handlers = explorer.getHandlers();
    for (const warning of unreachableLambdaBindings(dispatcher.declaredQueues, handlers, options.queue)) {
      logger.warn(warning);
    }
    const sandboxOnly = sandboxOnlyStore(app);
    if (sandboxOnly) logger.warn(sandboxOnly);
    // At INIT, before any request: the first batch then does not pay for the code that builds a call.
    explorer.warmUp();
    return { app, processor };
  } catch (error) {
    // A retry boots a new app: this one must not keep its store's connections open meanwhile. The
    // boot's failure is the one to report, not a close that fails after it.
    await app.close().catch(() => undefined);
    throw error;
  }
}
