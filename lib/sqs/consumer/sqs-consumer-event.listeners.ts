import { Logger } from '@nestjs/common';
import type { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { discoverMethods } from '../../idempotency/handler-discovery';
import { getSqsConsumerEventBindings, SqsConsumerEventListener } from './sqs-consumer-event.decorator';

/**
 * The app's `@SqsConsumerEventHandler()` methods: plain calls (no message to guard), looked up on the
 * instance at call time, and isolated.
 */
export function findConsumerEventListeners(
  discovery: DiscoveryService,
  scanner: MetadataScanner,
): SqsConsumerEventListener[] {
  const logger = new Logger('SqsConsumer');
  const found: SqsConsumerEventListener[] = [];
  for (const { instance, methodName, method, isStatic } of discoverMethods(discovery, scanner)) {
    const bindings = getSqsConsumerEventBindings(method);
    if (bindings.length === 0) continue;
    const name = `${instance.constructor.name}.${methodName}`;
    if (!isStatic) {
      logger.warn(
        `${name} is an @SqsConsumerEventHandler() on a request-scoped provider, which is not supported; ` +
          'make the provider a singleton.',
      );
      continue;
    }
    // Looked up at call time: wrappers applied after bootstrap keep working.
    const listener = isolateListener(`${name} (an @SqsConsumerEventHandler())`, logger, (...args) =>
      (instance as Record<string, (...a: unknown[]) => unknown>)[methodName](...args),
    );
    for (const { queue, event } of bindings) found.push({ name, queue, event, listener });
  }
  return found;
}

/** A listener that logs its failure instead of throwing it into sqs-consumer (a throwing listener breaks the emit). */
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
