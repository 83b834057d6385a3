import { Logger, LogLevel } from '@nestjs/common';
import type { InjectionToken } from '@nestjs/common';
import type { ModulesContainer } from '@nestjs/core';

/**
 * Every place the library relies on something Nest does not publish, in one file, each with why no
 * public API does it and what happens if a future Nest drops it (the library degrades, never
 * breaks). `test/compat` runs the apps that exercise each of them on Nest 11 and Nest 12.
 */

/**
 * Nest's parameter-metadata key (`ROUTE_ARGS_METADATA` of `@nestjs/common/constants`), spelled out
 * because deep imports are not part of Nest's public entry points (and are closed by Nest 12's
 * package exports). The SQS host reads the parameter decorators of a handler under it.
 */
export const NEST_ROUTE_ARGS_METADATA = '__routeArguments__';

/**
 * Puts the module that hosts the consumers first in line when the app closes, and last when it
 * starts.
 *
 * Nest runs `onModuleDestroy` module by module, in ascending `distance` from the root; global
 * modules (SqsModule is one) get the largest distance, so they would close last: the app's own
 * modules would already have closed their database pools and clients while handlers were still
 * running on them. Consumers must instead stop polling and drain their in-flight batches before
 * any other provider is destroyed. The same ordering runs init and bootstrap hooks in descending
 * distance, so the consumers also start only after every other module has bootstrapped. Nest has
 * no public way to order lifecycle hooks across modules, hence the `distance` field of its
 * `Module` class.
 *
 * Nest reads the distances once, when the app initialises (`init()`), after every provider is
 * constructed; this must run from a constructor. Returns `false` when the container does not
 * expose distances (a future Nest), in which case the default order applies.
 */
export function runHooksAroundEveryOtherModule(modules: ModulesContainer, provider: InjectionToken): boolean {
  let lowest = Infinity;
  const hosts = [];
  for (const nestModule of modules.values()) {
    if (typeof nestModule.distance !== 'number') return false;
    if (nestModule.providers.has(provider)) hosts.push(nestModule);
    else lowest = Math.min(lowest, nestModule.distance);
  }
  if (hosts.length === 0) return false;
  const distance = Number.isFinite(lowest) ? lowest - 1 : -1;
  for (const host of hosts) host.distance = distance;
  return true;
}

/**
 * The app's microservice transport strategies as Nest announces them (`ModulesContainer`'s RPC
 * target registry, a replaying stream, present since Nest 8): a transport strategy gets no
 * dependency injection, and this is the only place an app's providers can meet it before it
 * listens. `undefined` when the container has no registry (then there is nothing to bind).
 */
export function rpcTargetsOf(
  modules: ModulesContainer,
): { subscribe(next: (target: unknown) => void): { unsubscribe(): void } } | undefined {
  return (modules as Partial<ModulesContainer>).getRpcTargetRegistry?.<unknown>();
}

/**
 * Whether Nest's logger writes `level`. `Logger.isLevelEnabled()` answers `false` until the app
 * restricts levels (`logger: ['error']`), although everything is logged then; the private static
 * `Logger.logLevels` tells the two apart (read as "all levels on" when absent).
 */
export function isLogLevelEnabled(level: LogLevel): boolean {
  const restricted = (Logger as unknown as { logLevels?: LogLevel[] }).logLevels;
  return restricted === undefined || Logger.isLevelEnabled(level);
}
