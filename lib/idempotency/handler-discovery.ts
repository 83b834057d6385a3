import type { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { MESSAGE_TYPE_METADATA, MICROSERVICES_PATTERN_METADATA } from './idempotency.constants';

/**
 * The one discovery pass behind every bootstrap-time reader of handler decorators
 * (`SqsHandlerExplorer`, `SqsConsumerEventExplorer`, `IdempotentHandlerRegistry`): how providers and
 * controllers are walked (each instance once, every method name of its prototype chain) is written
 * here once, and each reader only says what it does with a method.
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

/**
 * The event type a message handler consumes: what its host's decorator recorded
 * (`@SqsMessageHandler()` records a reader of its event class's type), else its transport pattern.
 */
export function messageTypeOf(method: Function): string | undefined {
  const typeOf = Reflect.getMetadata(MESSAGE_TYPE_METADATA, method) as (() => string) | undefined;
  if (typeOf !== undefined) return typeOf();
  const patterns = Reflect.getMetadata(MICROSERVICES_PATTERN_METADATA, method) as unknown[] | undefined;
  if (!patterns || patterns.length === 0) return undefined;
  const [pattern] = patterns;
  return typeof pattern === 'string' ? pattern : JSON.stringify(pattern);
}
