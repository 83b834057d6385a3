import type { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { MESSAGE_TYPE_METADATA } from './idempotency.constants';

/** `@EventPattern()` metadata key of `@nestjs/microservices`, read without importing that package. */
const MICROSERVICES_PATTERN_METADATA = 'microservices:pattern';

/** One method of a provider or controller instance. */
export interface DiscoveredMethod {
  readonly instance: object;
  readonly methodName: string;
  /** The function on the prototype (decorator metadata hangs on it). */
  readonly method: unknown;
  /** The provider's name, for warnings. */
  readonly providerName: string;
  /** False for a request-scoped provider: a host cannot call it as a singleton. */
  readonly isStatic: boolean;
}

/** Each app's last pass, reused by the readers after the first (a later lazy module adds wrappers, and a pass). */
const passes = new WeakMap<DiscoveryService, { wrappers: number; methods: DiscoveredMethod[] }>();

/** Every method of every provider and controller instance, each instance visited once: one pass for every bootstrap reader. */
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

/** The event type a handler consumes: what its host's decorator recorded, else its transport pattern. */
export function messageTypeOf(method: Function): string | undefined {
  const typeOf = Reflect.getMetadata(MESSAGE_TYPE_METADATA, method) as (() => string) | undefined;
  if (typeOf !== undefined) return typeOf();
  const patterns = Reflect.getMetadata(MICROSERVICES_PATTERN_METADATA, method) as unknown[] | undefined;
  if (!patterns || patterns.length === 0) return undefined;
  const [pattern] = patterns;
  return typeof pattern === 'string' ? pattern : JSON.stringify(pattern);
}
