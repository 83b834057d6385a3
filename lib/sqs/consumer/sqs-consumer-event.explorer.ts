import { Injectable, Logger } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { getSqsConsumerEventBindings, SqsConsumerEventName } from './sqs-consumer-event.decorator';

/** One `@SqsConsumerEventHandler()` listener found in the app. */
export interface SqsConsumerEventListener {
  /** `Class.method`, for logs and errors. */
  readonly name: string;
  readonly queue: string;
  readonly event: SqsConsumerEventName;
  /** Calls the method; never throws (a failing listener is logged). */
  readonly listener: (...args: unknown[]) => void;
}

/**
 * Finds `@SqsConsumerEventHandler()` methods on every provider and controller. Listeners are plain
 * calls (no guards or interceptors: there is no message to guard), looked up on the instance at
 * call time so wrappers applied after bootstrap keep working, and isolated: an exception or a
 * rejected promise is logged, never thrown into sqs-consumer.
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
    const seen = new Set<object>();
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || seen.has(instance)) continue;
      seen.add(instance);
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
      for (const methodName of this.metadataScanner.getAllMethodNames(prototype)) {
        const bindings = getSqsConsumerEventBindings(prototype[methodName]);
        if (bindings.length === 0) continue;
        const name = `${instance.constructor.name}.${methodName}`;
        if (!wrapper.isDependencyTreeStatic()) {
          this.logger.warn(
            `${name} is an @SqsConsumerEventHandler() on a request-scoped provider, which is not supported; ` +
              'make the provider a singleton.',
          );
          continue;
        }
        const listener = this.isolate(name, instance, methodName);
        for (const { queue, event } of bindings) found.push({ name, queue, event, listener });
      }
    }
    return found;
  }

  private isolate(name: string, instance: Record<string, unknown>, methodName: string) {
    const report = (error: unknown) =>
      this.logger.error(
        `${name} (an @SqsConsumerEventHandler()) failed: ${(error as Error)?.message ?? String(error)}`,
        (error as Error)?.stack,
      );
    return (...args: unknown[]): void => {
      try {
        const result = (instance[methodName] as (...a: unknown[]) => unknown).apply(instance, args);
        if (result instanceof Promise) result.catch(report);
      } catch (error) {
        report(error);
      }
    };
  }
}
