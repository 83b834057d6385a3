import { AcquireResult, IdempotencyStore, InMemoryIdempotencyStore } from '../../lib';

export interface StoreCall {
  method: 'tryAcquire' | 'markComplete' | 'forget' | 'extend';
  key: string;
  ttlMs?: number;
  token?: string;
  answer?: unknown;
}

/** An in-memory store that records every call and its answer. */
export class RecordingStore implements IdempotencyStore {
  readonly calls: StoreCall[] = [];
  /** Its keys live in this process, as the in-memory store's do. */
  readonly shared = false;

  constructor(readonly inner: InMemoryIdempotencyStore = new InMemoryIdempotencyStore()) {}

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
