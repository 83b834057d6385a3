import { DynamicModule, Module } from '@nestjs/common';
import { IdempotencyConfigurationError } from '../idempotency/idempotency.errors';
import { createIdempotencyCenterController } from './idempotency-center.controller';
import type { IdempotencyCenterOptions } from './idempotency-center-options.interface';

/**
 * The Idempotency Center over HTTP (opt-in): `GET /idempotency` returns `IdempotencyStats` as
 * JSON — which handlers of which event types are covered by idempotency, with their counters —
 * and `GET /idempotency/ui` renders it as a page with per-type duplicate rates. Needs
 * `IdempotencyModule` (for the counters) and an HTTP platform.
 *
 * @example
 * ```ts
 * IdempotencyCenterModule.forRoot({ guards: [AdminGuard] })
 * ```
 */
@Module({})
export class IdempotencyCenterModule {
  static forRoot(options: IdempotencyCenterOptions = {}): DynamicModule {
    const guards = options.guards ?? [];
    if (guards.length === 0 && !options.allowAnonymous) {
      throw new IdempotencyConfigurationError(
        'IdempotencyCenterModule: pass guards: [YourAdminGuard] to protect the counters of your traffic, ' +
          'or allowAnonymous: true for local development.',
      );
    }
    const path = (options.path ?? 'idempotency').replace(/^\/+|\/+$/g, '');
    return {
      module: IdempotencyCenterModule,
      controllers: [createIdempotencyCenterController(path, guards)],
    };
  }
}
