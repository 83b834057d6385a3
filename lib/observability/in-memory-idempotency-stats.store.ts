import type { IdempotencyStatsStore } from './idempotency-stats-store.interface';

/**
 * Fleet counters for several app instances in one process (tests, demos, a worker pool): give
 * every instance the same object and each Center shows them all.
 */
export class InMemoryIdempotencyStatsStore implements IdempotencyStatsStore {
  private readonly totals = new Map<string, number>();

  async add(increments: ReadonlyMap<string, number>): Promise<void> {
    for (const [field, delta] of increments) this.totals.set(field, (this.totals.get(field) ?? 0) + delta);
  }

  async read(): Promise<Record<string, number>> {
    return Object.fromEntries(this.totals);
  }
}
