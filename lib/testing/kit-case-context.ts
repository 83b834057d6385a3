import { IdempotencyStore } from '../stores/idempotency-store.interface';

/**
 * What a group of the conformance kit's cases (batch methods, fingerprints) needs from
 * `describeIdempotencyStore`: its runner, the store of the current case, fresh keys and time.
 */
export interface KitCaseContext {
  describe(name: string, body: () => void): unknown;
  it(name: string, body: () => Promise<void>): unknown;
  /** The store under test (of the current case). */
  store(): IdempotencyStore;
  /** The store and its peers, to spread concurrent callers over. */
  stores(): IdempotencyStore[];
  freshKey(label: string): string;
  elapse(ms: number): Promise<void>;
  /** The current attempt's short TTL: read it when the case runs (a retry in real time raises it). */
  readonly shortTtl: number;
  readonly pastShortTtl: number;
  longTtl: number;
  concurrency: number;
}
