import { AcquireResult, BatchClaim, BatchCompletion } from '../../lib/stores';
import { IdempotencyStore, InMemoryIdempotencyStore } from '../../lib';

export interface StoreCall {
  method: 'tryAcquire' | 'markComplete' | 'forget' | 'extend';
  key: string;
  ttlMs?: number;
  token?: string;
  answer?: unknown;
}

/** One call of a batch method, and how many keys it carried. */
export interface BatchCall {
  method: 'tryAcquireMany' | 'markCompleteMany';
  size: number;
}

/**
 * Process-wide defaults of `RecordingStore` (one spec file per Jest worker module registry): a spec
 * file sets `batches` to run a whole suite against a store with the batch methods.
 */
export const recordingStoreDefaults = { batches: false };

/**
 * An in-memory store that records every call and its answer. With `batches` it also has the batch
 * methods (`tryAcquireMany`, `markCompleteMany`), so the module claims and completes a turn's keys
 * in one call (recorded in `batchCalls`); each key of a batch goes through `tryAcquire` /
 * `markComplete`, so `calls` reads the same per key either way, and a test that replaces
 * `tryAcquire` on the instance fails the batch that carries it.
 */
export class RecordingStore implements IdempotencyStore {
  readonly calls: StoreCall[] = [];
  readonly batchCalls: BatchCall[] = [];
  /** Its keys live in this process, as the in-memory store's do. */
  readonly shared = false;
  tryAcquireMany?: (claims: readonly BatchClaim[]) => Promise<AcquireResult[]>;
  markCompleteMany?: (completions: readonly BatchCompletion[]) => Promise<boolean[]>;

  constructor(
    readonly inner: InMemoryIdempotencyStore = new InMemoryIdempotencyStore(),
    { batches = recordingStoreDefaults.batches }: { batches?: boolean } = {},
  ) {
    if (!batches) return;
    this.tryAcquireMany = (claims) => {
      this.batchCalls.push({ method: 'tryAcquireMany', size: claims.length });
      return Promise.all(claims.map(({ key, ttlMs, token }) => this.tryAcquire(key, ttlMs, token)));
    };
    this.markCompleteMany = (completions) => {
      this.batchCalls.push({ method: 'markCompleteMany', size: completions.length });
      return Promise.all(completions.map(({ key, ttlMs, token }) => this.markComplete(key, ttlMs, token)));
    };
  }

  async tryAcquire(key: string, ttlMs: number, token: string): Promise<AcquireResult> {
    const answer = await this.inner.tryAcquire(key, ttlMs, token);
    this.calls.push({ method: 'tryAcquire', key, ttlMs, token, answer });
    return answer;
  }
  async markComplete(key: string, ttlMs: number, token: string): Promise<boolean> {
    const answer = await this.inner.markComplete(key, ttlMs, token);
    this.calls.push({ method: 'markComplete', key, ttlMs, token, answer });
    return answer;
  }
  async forget(key: string, token: string): Promise<boolean> {
    const answer = await this.inner.forget(key, token);
    this.calls.push({ method: 'forget', key, token, answer });
    return answer;
  }
  async extend(key: string, ttlMs: number, token: string): Promise<boolean> {
    const answer = await this.inner.extend(key, ttlMs, token);
    this.calls.push({ method: 'extend', key, ttlMs, token, answer });
    return answer;
  }

  methods(): string[] {
    return this.calls.map((call) => call.method);
  }
}
