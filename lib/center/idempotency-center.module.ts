import { DynamicModule, Module } from '@nestjs/common';
import { IDEMPOTENCY_CENTER_OPTIONS } from './idempotency-center-options.interface';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { createIdempotencyCenterController } from './idempotency-center.controller';
import type { IdempotencyCenterOptions, ResolvedCenterOptions } from './idempotency-center-options.interface';
import { OptionShape, readOptions } from '../common/known-options';
import { IDEMPOTENCY_MODULE_OPTIONS, IDEMPOTENCY_STATS_OPTIONS } from '../idempotency/idempotency.constants';
import { RecordObservers } from '../idempotency/record-observer';
import { installRecordCounters } from '../observability/record-counters';
import { IdempotencyCenterService } from './idempotency-center.service';

/** The counters this module installed (`null` when `stats` had), so Nest runs their shutdown hook. */
const CENTER_COUNTERS = Symbol('CENTER_COUNTERS');

const CENTER_OPTION_SHAPE: OptionShape<IdempotencyCenterOptions> = {
  path: 'string',
  guards: 'array',
  allowAnonymous: 'boolean',
  hashKeys: 'boolean',
  lookupTimeoutMs: 'number',
};

/**
 * The Idempotency Center over HTTP (opt-in): one script-free page at `<path>/ui` (trends, recent
 * failures and duplicates, a key lookup, coverage, store health, instances) and the same as JSON at
 * `<path>/api/v1/...`. Needs `IdempotencyModule` and an HTTP platform; turns on the counters it shows (with
 * `IdempotencyModule`'s `stats` options, if any); fleet-wide with a shared stats store.
 *
 * @example
 * ```ts
 * IdempotencyCenterModule.forRoot({ guards: [AdminGuard], hashKeys: true })
 * ```
 */
@Module({})
export class IdempotencyCenterModule {
  static forRoot(given: IdempotencyCenterOptions = {}): DynamicModule {
    const options = readOptions(given, CENTER_OPTION_SHAPE, 'IdempotencyCenterModule.forRoot()');
    const guards = options.guards ?? [];
    if (guards.length === 0 && !options.allowAnonymous) {
      throw new IdempotencyConfigurationError(
        'IdempotencyCenterModule: pass guards: [YourAdminGuard] to protect what the Center shows of your traffic ' +
          '(keys, failure reasons, counters), or allowAnonymous: true for local development.',
      );
    }
    const lookupTimeoutMs = options.lookupTimeoutMs ?? 5_000;
    if (!(Number.isFinite(lookupTimeoutMs) && lookupTimeoutMs > 0)) {
      throw new IdempotencyConfigurationError(
        `IdempotencyCenterModule: lookupTimeoutMs must be a positive number of milliseconds, got ${String(options.lookupTimeoutMs)}.`,
      );
    }
    const resolved: ResolvedCenterOptions = { hashKeys: options.hashKeys === true, lookupTimeoutMs };
    const path = (options.path ?? 'idempotency').replace(/^\/+|\/+$/g, '');
    return {
      module: IdempotencyCenterModule,
      controllers: [createIdempotencyCenterController(path, guards)],
      providers: [
        { provide: IDEMPOTENCY_CENTER_OPTIONS, useValue: resolved },
        {
          provide: CENTER_COUNTERS,
          useFactory: installRecordCounters,
          inject: [RecordObservers, IDEMPOTENCY_STATS_OPTIONS, IDEMPOTENCY_MODULE_OPTIONS],
        },
        IdempotencyCenterService,
      ],
    };
  }
}
