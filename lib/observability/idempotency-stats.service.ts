import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type {
  IdempotencyActivitySnapshot,
  IdempotencyStatsReport,
  IdempotencyStatsSnapshot,
} from './idempotency-stats.report';

export type {
  EventTypeStats,
  HandlerStats,
  IdempotencyActivitySnapshot,
  IdempotencyStatsSnapshot,
} from './idempotency-stats.report';

/**
 * The Center's report: per event type and handler, its coverage and counters (`snapshot()`), and the
 * recent activity (`activity()`), of the fleet with a shared stats store. It reads the counters that
 * `IdempotencyModule.forRoot({ stats })` or `IdempotencyCenterModule` turns on; without them each method
 * rejects with an `IdempotencyConfigurationError` naming both. Provided by `IdempotencyModule` in every
 * app; the report's code loads at the first call.
 *
 * @example
 * ```ts
 * const { eventTypes, totals } = await app.get(IdempotencyStats).snapshot();
 * ```
 */
@Injectable()
export class IdempotencyStats {
  /** `moduleRef`: `IdempotencyModule`'s, where the report reads the observers, policies and store. */
  constructor(private readonly moduleRef: ModuleRef) {}

  /** Counters and coverage: the fleet's with a shared store (rejects when unreadable), or `'instance'`. */
  async snapshot(scope?: 'instance'): Promise<IdempotencyStatsSnapshot> {
    return (await this.open()).snapshot(scope);
  }

  /**
   * The recent activity: the fleet's when the stats store shares it (rejects when unreadable), or `'instance'`;
   * with `recordsPerKind`, at most that many of the newest failures, and as many duplicates and skips.
   */
  async activity(scope?: 'instance', recordsPerKind?: number): Promise<IdempotencyActivitySnapshot> {
    return (await this.open()).activity(scope, recordsPerKind);
  }

  /** Flushes this instance's pending counters and activity now (also done every `flushIntervalMs`). */
  async flush(): Promise<void> {
    return (await this.open()).flush();
  }

  private async open(): Promise<IdempotencyStatsReport> {
    return (await import('./idempotency-stats.report')).openStatsReport(this.moduleRef);
  }
}
