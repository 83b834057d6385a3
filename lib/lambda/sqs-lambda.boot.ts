import { DynamicModule, INestApplicationContext, Logger, Module, Type } from '@nestjs/common';
import { DiscoveryService, NestFactory } from '@nestjs/core';
import { SqsConfigurationError } from '../common/sqs-idempotency.error';
import { SqsQueueRegistry } from '../sqs/nest/sqs-queue.registry';
import { SqsHandlerExplorer } from '../sqs/nest/sqs-handler.explorer';
import { SQS_LAMBDA_HOST } from '../sqs/sqs.constants';
import { SqsCoreModule } from '../sqs/nest/sqs-core.module';
import { lostConstructorMetadata } from './constructor-metadata.check';
import { unreachableLambdaBindings } from './sqs-lambda-bindings.check';
import { sandboxOnlyStore } from './sandbox-store.check';
import { SqsLambdaEventProcessor } from './sqs-lambda-event.processor';
import type { SqsLambdaHandlerOptions } from './sqs-lambda.types';

/** A Lambda sandbox's root: the user's module, the record pipeline, and the flag that keeps pollers off. */
@Module({})
class SqsLambdaModule {}

/**
 * One boot of a Lambda sandbox: the app in Lambda's root module, checked, configured, with its batch
 * processor; closed if a step fails. Loaded by `createSqsLambdaHandler()` when its sandbox boots, so an
 * app that never runs as a Lambda handler never loads the Lambda host's machinery.
 */
export async function bootLambdaApp(
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
    warmUpHandlerCalls(explorer);
    return { app, processor };
  } catch (error) {
    // A retry boots a new app: this one must not keep its store's connections open meanwhile. The
    // boot's failure is the one to report, not a close that fails after it.
    await app.close().catch(() => undefined);
    throw error;
  }
}

/**
 * Builds each handler's call once and lets it go, so that the code building one has run (V8 compiles a
 * function on its first call) before the first record (bench/PROFILE.md, "Cold start"). The call a record
 * uses is still built on its first call: global enhancers added until then count.
 */
function warmUpHandlerCalls(explorer: SqsHandlerExplorer): void {
  for (const build of explorer.callBuilders) {
    try {
      build();
    } catch {
      // The first record meets the same failure and reports it, as it would without this.
    }
  }
}
