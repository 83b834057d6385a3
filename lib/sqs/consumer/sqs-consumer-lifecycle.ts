import type { Logger } from '@nestjs/common';

/**
 * What the two polling hosts (`SqsModule`'s consumers, `SqsServer`) share about running consumers,
 * so they stop and report alike.
 */

/** Default of `shutdownTimeoutMs`: below the 30 s SIGTERM-to-SIGKILL grace of ECS and Kubernetes. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 25_000;

/**
 * A consumer event listener that never disturbs the consumer: an exception or a rejected promise
 * is logged as `<what> failed: <message>`, never thrown into sqs-consumer (an EventEmitter
 * listener that throws breaks the emit).
 */
export function isolateListener(
  what: string,
  logger: Logger,
  call: (...args: unknown[]) => unknown,
): (...args: unknown[]) => void {
  const report = (error: unknown) =>
    logger.error(`${what} failed: ${(error as Error)?.message ?? String(error)}`, (error as Error)?.stack);
  return (...args: unknown[]): void => {
    try {
      const result = call(...args);
      if (result instanceof Promise) result.catch(report);
    } catch (error) {
      report(error);
    }
  };
}
