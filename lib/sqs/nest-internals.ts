import { Logger, LogLevel } from '@nestjs/common';
import type { InjectionToken } from '@nestjs/common';
import type { ExternalContextCreator, ModulesContainer } from '@nestjs/core';

/**
 * Every place the library relies on something Nest does not publish, in one file, each with why no
 * public API does it and what happens if a future Nest drops it (the library degrades, never
 * breaks). `test/compat/nest-internals.check.mjs` pins each of them on Nest 11 and Nest 12, in every
 * cell of `npm run test:compat`.
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

/**
 * The metadata keys under which `@UseGuards()`, `@UseInterceptors()`, `@UsePipes()` and
 * `@UseFilters()` store a class's or a method's enhancers (`@nestjs/common/constants`, spelled out
 * for the reason given for `NEST_ROUTE_ARGS_METADATA`), and the key part of a custom parameter
 * decorator (`createParamDecorator`). The SQS host reads them to tell whether a handler has any
 * enhancer but `@Idempotent()`'s interceptor (`sqs-direct-call.ts`); a spec checks them against
 * Nest's own constants.
 */
export const NEST_ENHANCER_METADATA = {
  guards: '__guards__',
  interceptors: '__interceptors__',
  pipes: '__pipes__',
  filters: '__exceptionFilters__',
} as const;
export const NEST_CUSTOM_ROUTE_ARGS_METADATA = '__customRouteArgs__';

/**
 * How many global enhancers the app has (`app.useGlobalGuards()` and the like, and the
 * `APP_GUARD` / `APP_INTERCEPTOR` / `APP_PIPE` / `APP_FILTER` providers, static or request-scoped),
 * read from the `ApplicationConfig` that Nest's own context creators hold. Nest publishes no way to
 * ask an app for them, and `ApplicationConfig` is not injectable; `ExternalContextCreator` keeps it
 * in its (private) `guardsContextCreator.config`. `undefined` when that cannot be read (a future
 * Nest): the caller then keeps Nest's pipeline, which sees them all.
 */
export function globalEnhancerCount(creator: object): number | undefined {
  const config = (creator as { guardsContextCreator?: { config?: Partial<GlobalEnhancerConfig> } })
    .guardsContextCreator?.config;
  if (config === null || typeof config !== 'object') return undefined;
  let count = 0;
  for (const getter of GLOBAL_ENHANCER_GETTERS) {
    const read = config[getter];
    if (typeof read !== 'function') return undefined;
    const found: unknown = read.call(config);
    if (!Array.isArray(found)) return undefined;
    count += found.length;
  }
  return count;
}

const GLOBAL_ENHANCER_GETTERS = [
  'getGlobalGuards',
  'getGlobalRequestGuards',
  'getGlobalInterceptors',
  'getGlobalRequestInterceptors',
  'getGlobalPipes',
  'getGlobalRequestPipes',
  'getGlobalFilters',
  'getGlobalRequestFilters',
] as const;
type GlobalEnhancerConfig = Record<(typeof GLOBAL_ENHANCER_GETTERS)[number], () => unknown>;

/**
 * Whether Nest's logger prints anything at all. `logger: false` (`Logger.overrideLogger(false)`)
 * clears the private static `Logger.staticInstanceRef`, after which every `Logger` call is a no-op,
 * while `Logger.isLevelEnabled()` still answers `true`; the SQS record logger skips building its
 * line then. Read as "printing" when the field is absent (a future Nest).
 */
export function isNestLoggerSilenced(): boolean {
  const logger = Logger as unknown as Record<string, unknown>;
  return 'staticInstanceRef' in logger && logger.staticInstanceRef == null;
}

/**
 * Nest's `ExternalContextCreator` hands an exception that none of the app's exception filters
 * handles to its default filter, which logs it (`ExceptionsHandler`, with the stack) and rethrows.
 * The SQS hosts log every record once, at its end, with its outcome and the stack of a failure
 * (`SqsRecordLogger`): through Nest's default, one failing handler would be logged twice.
 *
 * This returns a creator that is Nest's own in every respect but that last step: the app's filters
 * (global, class, method) still run first, in Nest's order, and their answer is used as Nest uses
 * it; an exception none of them handles is rethrown without a log line.
 *
 * Nest publishes no way to drop its default filter's log line. This reaches two internals:
 * `ExternalContextCreator`'s `externalErrorProxy` and `ExternalExceptionsHandler.invokeCustomFilters`.
 * Should either be missing, the creator is returned unchanged: failures are then logged twice,
 * nothing is lost.
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
