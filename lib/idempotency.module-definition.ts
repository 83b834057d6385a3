import { ConfigurableModuleBuilder, DynamicModule } from '@nestjs/common';
import type { IdempotencyClaimOptions } from './idempotency/idempotency-options.interface';
import type { IdempotencyStatsOptions } from './observability/idempotency-stats-store.interface';

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
