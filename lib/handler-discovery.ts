import type { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { MICROSERVICES_PATTERN_METADATA } from './constants';
import {
  getSqsConsumerEventBindings,
  SqsConsumerEventBinding,
} from './sqs/consumer/sqs-consumer-event.decorator';
import { getSqsEventType } from './sqs/sqs-event.decorator';
import { getSqsMessageHandlerMetadata, SqsMessageHandlerMetadata } from './sqs/sqs-message-handler.decorator';

/**
 * The one discovery pass and metadata accessor behind every bootstrap-time reader of handler
 * decorators (`SqsHandlerExplorer`, `SqsConsumerEventExplorer`, `IdempotentHandlerRegistry`), as
 * `@nestjs/bullmq` has one metadata accessor for its explorer: how providers and controllers are
 * walked (each instance once, every method name of its prototype chain) and how each decorator's
 * metadata is read are written here once, and each reader only says what it does with a method.
 */

/** One method of a provider or controller instance. */
export interface DiscoveredMethod {
  readonly instance: object;
  readonly methodName: string;
  /** The function on the prototype (decorator metadata hangs on it). */
  readonly method: unknown;
  /** The provider's name, for warnings. */
  readonly providerName: string;
  /**
   * False for a request-scoped provider (or one depending on one): its instance is not the one a
   * request gets, so a host cannot call it as a singleton.
   */
  readonly isStatic: boolean;
}

/**
 * The last pass of each app's discovery, with the wrappers it walked: the readers run one after
 * another at bootstrap, and a Lambda sandbox's cold start pays for each pass (bench/PROFILE.md).
 * A module loaded later (`LazyModuleLoader`) adds wrappers, and a new pass.
 */
const passes = new WeakMap<DiscoveryService, { wrappers: number; methods: DiscoveredMethod[] }>();

/** Every method of every provider and controller instance of the app, each instance visited once. */
export function discoverMethods(discovery: DiscoveryService, scanner: MetadataScanner): DiscoveredMethod[] {
  const wrappers = [...discovery.getProviders(), ...discovery.getControllers()];
  const last = passes.get(discovery);
  if (last?.wrappers === wrappers.length) return last.methods;
  const found: DiscoveredMethod[] = [];
  passes.set(discovery, { wrappers: wrappers.length, methods: found });
  const seen = new Set<object>();
  for (const wrapper of wrappers) {
    const instance = wrapper.instance as object | undefined;
    if (!instance || typeof instance !== 'object' || seen.has(instance)) continue;
    seen.add(instance);
    const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
    let isStatic: boolean | undefined;
    for (const methodName of scanner.getAllMethodNames(prototype)) {
      const method = prototype[methodName];
      found.push({
        instance,
        methodName,
        method,
        providerName: String(wrapper.name),
        get isStatic() {
          return (isStatic ??= wrapper.isDependencyTreeStatic());
        },
      });
    }
  }
  return found;
}

/** The `@SqsMessageHandler()` binding of a method, if it has one. */
export function sqsMessageHandlerOf(method: unknown): SqsMessageHandlerMetadata | undefined {
  return getSqsMessageHandlerMetadata(method);
}

/** The `@SqsConsumerEventHandler()` bindings of a method (none: empty). */
export function consumerEventBindingsOf(method: unknown): readonly SqsConsumerEventBinding[] {
  return getSqsConsumerEventBindings(method);
}

/** The event type a message handler consumes: its SQS event type, or its transport pattern. */
export function messageTypeOf(method: Function): string | undefined {
  const sqs = getSqsMessageHandlerMetadata(method);
  if (sqs) return getSqsEventType(sqs.eventClass);
  const patterns = Reflect.getMetadata(MICROSERVICES_PATTERN_METADATA, method) as unknown[] | undefined;
  if (!patterns || patterns.length === 0) return undefined;
  const [pattern] = patterns;
  return typeof pattern === 'string' ? pattern : JSON.stringify(pattern);
}
