import { Logger, LogLevel } from '@nestjs/common';
import type { InjectionToken } from '@nestjs/common';
import type { ExternalContextCreator, ModulesContainer } from '@nestjs/core';

/**
 * Every place the library relies on something Nest does not publish, each degrading (never breaking)
 * if Nest drops it; `test/compat/nest-internals.check.mjs` pins each on Nest 11 and 12. Those only the
 * direct call reads are in `nest-enhancer-internals.ts`, loaded with it.
 */

/** Nest's parameter-metadata key, spelled out: deep imports are closed by Nest 12's package exports. */
export const NEST_ROUTE_ARGS_METADATA = '__routeArguments__';

/**
 * Puts the consumers' module first when the app closes and last when it starts, so consumers drain
 * before the app's pools close. Nest orders lifecycle hooks by the private `distance` of a module
 * only; must run from a constructor. `false` where the container has no distances.
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
 * The app's transport strategies as Nest announces them (the RPC target registry): a strategy gets no
 * injection, and this is the one place providers can meet it before it listens.
 */
export function rpcTargetsOf(
  modules: ModulesContainer,
): { subscribe(next: (target: unknown) => void): { unsubscribe(): void } } | undefined {
  return (modules as Partial<ModulesContainer>).getRpcTargetRegistry?.<unknown>();
}

/** Whether Nest's logger writes `level` (`Logger.isLevelEnabled()` is wrong until levels are restricted). */
export function isLogLevelEnabled(level: LogLevel): boolean {
  const restricted = (Logger as unknown as { logLevels?: LogLevel[] }).logLevels;
  return restricted === undefined || Logger.isLevelEnabled(level);
}

/** Whether Nest's logger prints at all (`logger: false` empties its static instance). */
export function isNestLoggerSilenced(): boolean {
  const logger = Logger as unknown as Record<string, unknown>;
  return 'staticInstanceRef' in logger && logger.staticInstanceRef == null;
}

/**
 * Nest's `ExternalContextCreator` without its default filter's log line: the app's filters still run,
 * but an unhandled exception is rethrown unlogged, since the record's own line already carries it.
 * Unchanged where the two internals it reaches are missing (failures are then logged twice).
 */
export function withoutDefaultErrorLog(creator: ExternalContextCreator): ExternalContextCreator {
  const nestProxy = (creator as unknown as { externalErrorProxy?: ErrorProxy }).externalErrorProxy;
  if (typeof nestProxy?.createProxy !== 'function') return creator;
  const quietProxy: ErrorProxy = {
    createProxy: (target, handler, type) => {
      if (typeof handler?.invokeCustomFilters !== 'function') {
        return nestProxy.createProxy(target, handler, type);
      }
      const rethrowUnhandled = {
        next(exception: unknown, host: unknown) {
          // What Nest's ExternalExceptionsHandler.next does, minus the default filter's log line.
          const answer = handler.invokeCustomFilters!(exception, host);
          if (answer) return answer;
          throw exception;
        },
      };
      return nestProxy.createProxy(target, rethrowUnhandled, type);
    },
  };
  // A child object: the app's shared creator (other libraries use it too) stays untouched.
  return Object.create(creator, { externalErrorProxy: { value: quietProxy } }) as ExternalContextCreator;
}

/** The shapes of the two Nest internals used, structurally. */
interface ErrorProxy {
  createProxy(target: (...args: unknown[]) => unknown, handler: ExceptionsHandlerLike, type: string): unknown;
}
interface ExceptionsHandlerLike {
  next(exception: unknown, host: unknown): unknown;
  invokeCustomFilters?(exception: unknown, host: unknown): unknown;
}
