import { DynamicModule, Module } from '@nestjs/common';
import { IDEMPOTENCY_CENTER_OPTIONS } from './idempotency-center-options.interface';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { createIdempotencyCenterController } from './idempotency-center.controller';
import type { IdempotencyCenterOptions, ResolvedCenterOptions } from './idempotency-center-options.interface';
import { IdempotencyCenterService } from './idempotency-center.service';

/**
 * The Idempotency Center over HTTP (opt-in), for the operator paged at night: what happened to a key,
 * which messages fail and why, whether it is getting worse, whether the store is healthy.
 *
 * - `GET /idempotency/ui`: one self-contained page (no script, no external asset, a strict
 *   Content-Security-Policy) with the last hour's per-minute trends per event type, the recent
 *   duplicates, skips, failures and invalid records with their reasons, a key lookup, coverage
 *   (handlers without `@Idempotent()`, event types no handler routes), the store's health (claim
 *   latency, errors, warnings) and the instances seen recently.
 * - `GET /idempotency/api/v1/overview`, `/records`, `/lookup`, `/counters`: the same as JSON.
 * - `GET /idempotency`: the counters and coverage, as in 0.1.
 *
 * Needs `IdempotencyModule` (for the counters and the store) and an HTTP platform. Fleet-wide with a
 * shared stats store (`stats: { store: new RedisIdempotencyStatsStore(redis) }`).
 *
 * @example
 * ```ts
 * IdempotencyCenterModule.forRoot({ guards: [AdminGuard], hashKeys: true })
 * ```
 */
@Module({})
export class IdempotencyCenterModule {
  static forRoot(options: IdempotencyCenterOptions = {}): DynamicModule {
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
      providers: [{ provide: IDEMPOTENCY_CENTER_OPTIONS, useValue: resolved }, IdempotencyCenterService],
    };
  }
}
