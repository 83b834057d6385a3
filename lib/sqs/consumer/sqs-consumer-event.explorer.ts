import { Injectable, Logger } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { discoverMethods } from '../../idempotency/handler-discovery';
import {
  getSqsConsumerEventBindings,
  isolateListener,
  SqsConsumerEventListener,
} from './sqs-consumer-event.decorator';

/**
 * Finds `@SqsConsumerEventHandler()` methods: plain calls (no message to guard), looked up on the
 * instance at call time, and isolated.
 */
@Injectable()
export class SqsConsumerEventExplorer {
  private readonly logger = new Logger('SqsConsumer');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly metadataScanner: MetadataScanner,
  ) {}

  explore(): SqsConsumerEventListener[] {
    const found: SqsConsumerEventListener[] = [];
    for (const { instance, methodName, method, isStatic } of discoverMethods(
      this.discovery,
      this.metadataScanner,
    )) {
      const bindings = getSqsConsumerEventBindings(method);
      if (bindings.length === 0) continue;
      const name = `${instance.constructor.name}.${methodName}`;
      if (!isStatic) {
        this.logger.warn(
          `${name} is an @SqsConsumerEventHandler() on a request-scoped provider, which is not supported; ` +
            'make the provider a singleton.',
        );
        continue;
      }
      // Looked up at call time: wrappers applied after bootstrap keep working.
      const listener = isolateListener(`${name} (an @SqsConsumerEventHandler())`, this.logger, (...args) =>
        (instance as Record<string, (...a: unknown[]) => unknown>)[methodName](...args),
      );
      for (const { queue, event } of bindings) found.push({ name, queue, event, listener });
    }
    return found;
  }
}
