import type { DynamicModule, Type } from '@nestjs/common';
import { SqsConfigurationError } from '../common/sqs-idempotency.error';
import type { SqsLambdaHandler, SqsLambdaHandlerOptions } from './sqs-lambda.types';
import { DISPATCH_OPTION_SHAPE } from '../sqs/sqs-options.reader';
import { OptionShape, readOptions } from '../common/known-options';
import { SandboxBoot } from './sandbox-boot';

/** What each option of `createSqsLambdaHandler()` takes (read when it is called). */
export const LAMBDA_OPTION_SHAPE: OptionShape<SqsLambdaHandlerOptions> = {
  ...DISPATCH_OPTION_SHAPE,
  queue: 'string',
  nestOptions: 'object',
  configure: 'function',
  bootAtInit: 'boolean',
};

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
  // The host's machinery (its root module, checks and batch processor) loads with the sandbox's boot.
  const sandbox = new SandboxBoot(async () =>
    (await import('./sqs-lambda.boot')).bootLambdaApp(appModule, options),
  );
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
