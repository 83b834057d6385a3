import { DynamicModule, Module, Provider, Type } from '@nestjs/common';
import { DiscoveryModule, ModuleRef } from '@nestjs/core';
import { ASYNC_OPTION_SHAPE, describeValue, OptionShape, readOptions } from './common/known-options';
import { IdempotencyConfigurationError } from './common/sqs-idempotency.error';
import { requireFactoryMethod } from './common/options-factory.check';
import { CLAIM_OPTION_SHAPE } from './idempotency/idempotency-options.interface';
import { resolveModuleOptions, storeClassName } from './idempotency/idempotency-options.validation';
import {
  IDEMPOTENCY_MODULE_OPTIONS,
  IDEMPOTENCY_STATS_OPTIONS,
  IDEMPOTENT_BATCH_CLAIMS,
  IDEMPOTENT_HANDLER_POLICIES,
} from './idempotency/idempotency.constants';
import { IdempotencyInterceptor } from './idempotency/idempotency.interceptor';
import { IdempotencyService } from './idempotency/idempotency.service';
import { IdempotentHandlerRegistry } from './idempotency/idempotent-handler.registry';
import { fingerprintsDeclared } from './idempotency/idempotent.decorator';
import {
  ConfigurableIdempotencyModule,
  IDEMPOTENCY_RAW_OPTIONS,
  IdempotencyModuleExtras,
  IdempotencyModuleOptions,
} from './idempotency.module-definition';
import type { IdempotencyStatsOptions } from './observability/idempotency-stats-store.interface';
import { IdempotencyStats } from './observability/idempotency-stats.service';
import { RECORD_OBSERVER_PROVIDERS } from './record-observers.providers';
import { IdempotencyStore, missingStoreMethods } from './stores/idempotency-store.interface';
import { InMemoryIdempotencyStore } from './stores/in-memory/in-memory-idempotency.store';

// What each option takes, read at start-up (known-options.ts).
const STATS_OPTION_SHAPE: OptionShape<IdempotencyStatsOptions> = {
  store: 'object',
  flushIntervalMs: 'number',
  meterProvider: 'object',
  activity: 'any', // false or an object: checkedStats says so itself
};
const MODULE_OPTION_SHAPE = { ...CLAIM_OPTION_SHAPE, stats: STATS_OPTION_SHAPE };
const EXTRAS_SHAPE: OptionShape<IdempotencyModuleExtras> = { isGlobal: 'boolean', imports: 'array' };

/** The options as given (forRoot's, or what forRootAsync's factory returns), read once for every reader. */
const IDEMPOTENCY_OPTIONS_READ = Symbol('IDEMPOTENCY_OPTIONS_READ');

const PROVIDERS: Provider[] = [
  {
    provide: IDEMPOTENCY_OPTIONS_READ,
    useFactory: (options?: IdempotencyModuleOptions) =>
      readOptions(options, MODULE_OPTION_SHAPE, 'IdempotencyModule options'),
    inject: [IDEMPOTENCY_RAW_OPTIONS],
  },
  {
    provide: IdempotencyStore,
    useFactory: (options: IdempotencyModuleOptions, moduleRef: ModuleRef) =>
      createStore(options.store, moduleRef),
    inject: [IDEMPOTENCY_OPTIONS_READ, ModuleRef],
  },
  {
    provide: IDEMPOTENCY_MODULE_OPTIONS,
    // The fingerprint code loads here, where this module or an `@Idempotent()` declares a fingerprint.
    useFactory: async (options: IdempotencyModuleOptions, store: IdempotencyStore) => {
      const fingerprinted = (options.fingerprint ?? false) !== false || fingerprintsDeclared();
      const fingerprints = fingerprinted ? await import('./idempotency/payload-fingerprint') : undefined;
      return resolveModuleOptions(options, store, process.env, fingerprints?.payloadFingerprinterOf);
    },
    inject: [IDEMPOTENCY_OPTIONS_READ, IdempotencyStore],
  },
  {
    provide: IDEMPOTENCY_STATS_OPTIONS,
    useFactory: (options: IdempotencyModuleOptions) =>
      options.stats === undefined ? null : checkedStats(options.stats),
    inject: [IDEMPOTENCY_OPTIONS_READ],
  },
  IdempotencyService,
  IdempotentHandlerRegistry,
  { provide: IDEMPOTENT_HANDLER_POLICIES, useExisting: IdempotentHandlerRegistry },
  { provide: IDEMPOTENT_BATCH_CLAIMS, useExisting: IdempotencyService },
  IdempotencyInterceptor,
  // What watches records (the Center's counters, metrics), each loaded only where the app asks for it.
  ...RECORD_OBSERVER_PROVIDERS,
  IdempotencyStats,
];

/**
 * Provides the store and the idempotency contract to `@Idempotent()` handlers. Global by default; the
 * `IdempotencyStore` token is exported, so `@InjectIdempotencyStore()` works anywhere.
 *
 * @example
 * ```ts
 * IdempotencyModule.forRoot({ store: new RedisIdempotencyStore(redis), service: 'billing' })
 * ```
 */
@Module({ imports: [DiscoveryModule], providers: PROVIDERS, exports: PROVIDERS })
export class IdempotencyModule extends ConfigurableIdempotencyModule {
  /** The module with `options`, a literal or a settings class (read: an unknown or mistyped option stops the app, naming it). */
  static override forRoot(options: IdempotencyModuleOptions & IdempotencyModuleExtras = {}): DynamicModule {
    const where = 'IdempotencyModule.forRoot()';
    return super.forRoot(readOptions(options, { ...MODULE_OPTION_SHAPE, ...EXTRAS_SHAPE }, where));
  }

  /** The module with options from a factory, a class or an existing provider (each read as `forRoot`'s). */
  static override forRootAsync(
    options: Parameters<typeof ConfigurableIdempotencyModule.forRootAsync>[0] & IdempotencyModuleExtras,
  ): DynamicModule {
    const where = 'IdempotencyModule.forRootAsync()';
    const read = readOptions(options, { ...ASYNC_OPTION_SHAPE, ...EXTRAS_SHAPE }, where);
    return requireFactoryMethod(super.forRootAsync(read), read, {
      token: IDEMPOTENCY_RAW_OPTIONS,
      method: 'createIdempotencyOptions',
      where,
      error: (message) => new IdempotencyConfigurationError(message),
    });
  }
}

/** The `stats` options, `activity` read too (their values are checked where they are used). */
function checkedStats(stats: IdempotencyStatsOptions): IdempotencyStatsOptions {
  const activity: unknown = stats.activity;
  if (activity === undefined || activity === false) return stats;
  if (activity === null || typeof activity !== 'object' || Array.isArray(activity)) {
    throw new IdempotencyConfigurationError(
      'IdempotencyModule options: stats.activity must be false or an object ({ recentPerType }), got ' +
        `${describeValue(activity)}. Leave it out to keep the recent records, trends and claim latency; false ` +
        'turns them off.',
    );
  }
  const where = 'IdempotencyModule options: stats.activity';
  return { ...stats, activity: readOptions(activity, { recentPerType: 'number' }, where) };
}

/** The store: the in-memory default, the instance given, or the class given, built by Nest (its lifecycle hooks run). */
async function createStore(
  store: IdempotencyModuleOptions['store'],
  moduleRef: ModuleRef,
): Promise<IdempotencyStore> {
  if (store === undefined) return new InMemoryIdempotencyStore();
  if (typeof store === 'function' && store.prototype === undefined) {
    throw new IdempotencyConfigurationError(
      'IdempotencyModule options: store is an arrow function, which Nest cannot instantiate. Give a store ' +
        'instance (store: new RedisIdempotencyStore(redis)), an @Injectable() store class (store: MyStore), or ' +
        'build it in forRootAsync({ useFactory: () => ({ store: ... }) }).',
    );
  }
  const instance =
    typeof store === 'function'
      ? await moduleRef.create(store as Type<IdempotencyStore>)
      : (store as IdempotencyStore);
  const missing = missingStoreMethods(instance);
  if (missing.length > 0) {
    throw new IdempotencyConfigurationError(
      `IdempotencyModule: ${describeStore(store, instance)} lacks ${missing.join(', ')}. A store implements ` +
        'tryAcquire(key, ttlMs, token), markComplete(key, ttlMs, token) and forget(key, token), all returning promises.',
    );
  }
  return instance;
}

/** The store as its author knows it: its class, or an object literal's methods. */
function describeStore(store: unknown, instance: object): string {
  if (typeof store === 'function') return `the store class ${store.name || '(anonymous)'}`;
  const name = storeClassName(instance);
  if (name !== undefined) return `the store ${name}`;
  const methods = Object.keys(instance).filter(
    (key) => typeof (instance as Record<string, unknown>)[key] === 'function',
  );
  return `the \`store\` option (an object literal with ${methods.length > 0 ? `methods ${methods.join(', ')}` : 'no methods'})`;
}
