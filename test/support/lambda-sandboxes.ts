import { Type } from '@nestjs/common';
import { createSqsLambdaHandler, SqsLambdaHandler } from '../../lib';

/** Lambda sandboxes of one function, opened by a test and closed after it. */
export interface LambdaSandboxes {
  /** A cold start of its own: `createSqsLambdaHandler` over the function's module, Nest silenced. */
  sandbox(): SqsLambdaHandler;
  /** Closes every sandbox opened so far (done after each test; call it to assert what closing does). */
  closeAll(): Promise<void>;
}

/**
 * Lambda sandboxes for a describe block, every one closed after each test, so that a store's pool or
 * client never outlives the test that opened it.
 *
 * @param functionModule gives the function's module for each sandbox (the same class, or a new one)
 */
export function useLambdaSandboxes(functionModule: () => Type<unknown>): LambdaSandboxes {
  const open: SqsLambdaHandler[] = [];
  const closeAll = async () => {
    await Promise.all(open.splice(0).map((sandbox) => sandbox.close()));
  };
  afterEach(closeAll);
  return {
    sandbox() {
      const sandbox = createSqsLambdaHandler(functionModule(), { nestOptions: { logger: false } });
      open.push(sandbox);
      return sandbox;
    },
    closeAll,
  };
}
