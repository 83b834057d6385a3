import { ConfigurableModuleBuilder, DynamicModule } from '@nestjs/common';
import type { OptionKinds } from './common/known-options';
import { CLAIM_OPTION_KINDS, IdempotencyClaimOptions } from './idempotency/idempotency-options.interface';
import {
  IdempotencyActivityOptions,
  IdempotencyStatsOptions,
} from './observability/idempotency-stats-store.interface';

/** Options of `IdempotencyModule.forRoot()`. Every duration is in milliseconds (Nest convention). */
export interface IdempotencyModuleOptions extends IdempotencyClaimOptions {
  /** The Idempotency Center's counters: share them across instances, pick the OpenTelemetry meter provider. */
  stats?: IdempotencyStatsOptions;
}

/** Extras of `forRoot`/`forRootAsync` that shape the module rather than the options. */
export interface IdempotencyModuleExtras {
  /** Register the module globally, so `@Idempotent()` works in every module. Default `true`. */
  isGlobal?: boolean;
  /** Modules whose providers a store class given as `store` depends on. */
  imports?: DynamicModule['imports'];
}

/** What each option of `forRoot()` (and of what `forRootAsync()`'s factory returns) accepts. */
export const MODULE_OPTION_KINDS: OptionKinds<IdempotencyModuleOptions> = {
  ...CLAIM_OPTION_KINDS,
  stats: 'object',
};

/** What each extra of `forRoot()`/`forRootAsync()` accepts. */
export const MODULE_EXTRA_KINDS: OptionKinds<IdempotencyModuleExtras> = {
  isGlobal: 'boolean',
  imports: 'array',
};

/** What `forRootAsync()` takes beside the extras (Nest's async options). */
export const ASYNC_OPTION_KINDS = {
  useFactory: 'function',
  useClass: 'function',
  useExisting: 'any',
  inject: 'array',
  provideInjectionTokensFrom: 'array',
} as const;

/** What each `stats` option accepts. */
export const STATS_OPTION_KINDS: OptionKinds<IdempotencyStatsOptions> = {
  store: 'object',
  flushIntervalMs: 'number',
  meterProvider: 'object',
  activity: ['object', 'boolean'],
};

/** What each `stats.activity` option accepts. */
export const ACTIVITY_OPTION_KINDS: OptionKinds<IdempotencyActivityOptions> = { recentPerType: 'number' };

export const {
  ConfigurableModuleClass: ConfigurableIdempotencyModule,
  MODULE_OPTIONS_TOKEN: IDEMPOTENCY_RAW_OPTIONS,
} = new ConfigurableModuleBuilder<IdempotencyModuleOptions>({ moduleName: 'Idempotency' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createIdempotencyOptions')
  .setExtras<IdempotencyModuleExtras>({ isGlobal: true, imports: [] }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
    imports: [...(definition.imports ?? []), ...(extras.imports ?? [])],
  }))
  .build();
