/**
 * The Nest internals only the direct call (`sqs-direct-call.ts`) reads, to tell whether a handler has an
 * enhancer besides `@Idempotent()`: loaded with it, never by an app that does not take it. Each degrades
 * as those of `nest-internals.ts` do (the handler keeps Nest's path); `test/compat/nest-internals.check.mjs`
 * pins both files on Nest 11 and 12.
 */

/**
 * The metadata keys of `@UseGuards()` and the other enhancer decorators, and of a custom parameter
 * decorator, spelled out (deep imports are closed by Nest 12's package exports); a spec checks them against Nest's.
 */
export const NEST_ENHANCER_METADATA = {
  guards: '__guards__',
  interceptors: '__interceptors__',
  pipes: '__pipes__',
  filters: '__exceptionFilters__',
} as const;
export const NEST_CUSTOM_ROUTE_ARGS_METADATA = '__customRouteArgs__';

/**
 * How many global enhancers the app has, read from the `ApplicationConfig` Nest's context creators
 * hold (Nest publishes no way to ask); `undefined` when unreadable, and the caller keeps Nest's path.
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
