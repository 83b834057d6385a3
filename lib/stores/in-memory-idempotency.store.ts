import { AcquireResult, IdempotencyStore } from './idempotency-store.interface';

/**
 * The default store: one process, one event loop, no dependencies.
 *
 * Atomic because every method decides and writes synchronously (no `await` between the read and the
 * write), so two claimers on one event loop can never interleave. It is right for tests, single
 * instance services and Lambda sandboxes that accept per-sandbox dedup; several instances need a
 * shared store (Redis).
 *
 * Memory stays bounded without timers: every claim also sweeps a couple of entries from a cursor
 * that walks the map, deleting the expired ones; `maxKeys` caps the size outright.
 */
export interface InMemoryIdempotencyStoreOptions {
  /** Milliseconds clock; inject a fake one to test expiry without sleeping. Default: monotonic time. */
  clock?: () => number;
  /**
   * Upper bound on remembered keys. When full, the oldest completed (or expired) key is evicted,
   * which shortens its dedup window; when every key is in flight, `tryAcquire` rejects. Default: none.
   */
  maxKeys?: number;
}

interface Entry {
  token: string;
  completed: boolean;
  /** Clock time at which the claim or the completion is forgotten (`Infinity` = never). */
  expiresAt: number;
}

/** Entries examined per `tryAcquire` by the incremental sweep. */
const SWEEP_STEP = 2;

export class InMemoryIdempotencyStore implements IdempotencyStore {
  /** Its keys live in this process only, so no other service can take them for its own. */
  readonly shared = false;
  private readonly entries = new Map<string, Entry>();
  private readonly clock: () => number;
  private readonly maxKeys: number;
  private sweepCursor: Iterator<[string, Entry]> | undefined;
  private evictedCount = 0;

  constructor(options: InMemoryIdempotencyStoreOptions = {}) {
    this.clock = options.clock ?? (() => performance.now());
    if (options.maxKeys !== undefined && !(Number.isInteger(options.maxKeys) && options.maxKeys > 0)) {
      throw new TypeError(
        `InMemoryIdempotencyStore: maxKeys must be a positive integer, got ${options.maxKeys}`,
      );
    }
    this.maxKeys = options.maxKeys ?? Infinity;
  }

  /**
   * The timeline of one key:
   *
   *   absent ──tryAcquire──▶ IN_PROGRESS(token, lease) ──markComplete(token)──▶ COMPLETED(ttl) ──ttl──▶ absent
   *                               │  └──forget(token)──────────────────────────────────────────────▶ absent
   *                               └──lease expires (worker crashed)──▶ absent: the next claimer wins
   *
   * A live entry answers for itself; an expired one is treated as absent and overwritten in place.
   */
  async tryAcquire(key: string, ttlMs: number, token: string): Promise<AcquireResult> {
    const now = this.clock();
    this.sweep(now, SWEEP_STEP);
    const entry = this.entries.get(key);
    if (entry !== undefined && entry.expiresAt > now) {
      return entry.completed ? AcquireResult.COMPLETED : AcquireResult.IN_PROGRESS;
    }
    if (entry !== undefined) {
      entry.token = token;
      entry.completed = false;
      entry.expiresAt = now + ttlMs;
    } else {
      this.makeRoom(now);
      this.entries.set(key, { token, completed: false, expiresAt: now + ttlMs });
    }
    return AcquireResult.ACQUIRED;
  }

  /**
   * Completes the claim of `token`. An expired claim that nobody took over is completed too (no one
   * else can own it); a key now held by another attempt is left alone and `false` returned.
   */
  async markComplete(key: string, ttlMs: number, token: string): Promise<boolean> {
    const now = this.clock();
    const entry = this.entries.get(key);
    if (entry === undefined || entry.expiresAt <= now) {
      if (entry === undefined) this.makeRoom(now);
      this.entries.set(key, { token, completed: true, expiresAt: now + ttlMs });
      return true;
    }
    if (entry.token !== token) return false;
    entry.completed = true;
    entry.expiresAt = now + ttlMs;
    return true;
  }

  /** Releases the claim of `token`; `false` when another attempt owns the key now. */
  async forget(key: string, token: string): Promise<boolean> {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.expiresAt <= this.clock()) return true;
    if (entry.token !== token || entry.completed) return false;
    this.entries.delete(key);
    return true;
  }

  /** Renews the lease of `token`; `false` when the lease already expired or another attempt owns it. */
  async extend(key: string, ttlMs: number, token: string): Promise<boolean> {
    const now = this.clock();
    const entry = this.entries.get(key);
    if (entry === undefined || entry.expiresAt <= now || entry.token !== token || entry.completed)
      return false;
    entry.expiresAt = now + ttlMs;
    return true;
  }

  /** Number of remembered keys (live and not yet swept). */
  get size(): number {
    return this.entries.size;
  }

  /** Keys evicted early because `maxKeys` was reached. */
  get evictions(): number {
    return this.evictedCount;
  }

  /** Deletes every expired entry now (the incremental sweep does this gradually on its own). */
  sweepExpired(): void {
    this.sweepCursor = undefined;
    this.sweep(this.clock(), Infinity);
  }

  /** Forgets everything (tests). */
  clear(): void {
    this.entries.clear();
    this.sweepCursor = undefined;
  }

  private sweep(now: number, budget: number): void {
    for (let examined = 0; examined < budget; examined++) {
      this.sweepCursor ??= this.entries.entries();
      const next = this.sweepCursor.next();
      if (next.done) {
        this.sweepCursor = undefined;
        return;
      }
      const [key, entry] = next.value;
      if (entry.expiresAt <= now) this.entries.delete(key);
    }
  }

  /** Frees one slot when `maxKeys` is reached: the oldest expired or completed entry goes. */
  private makeRoom(now: number): void {
    if (this.entries.size < this.maxKeys) return;
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt <= now || entry.completed) {
        if (entry.expiresAt > now) this.evictedCount++;
        this.entries.delete(key);
        return;
      }
    }
    throw new Error(
      `InMemoryIdempotencyStore is full: all ${this.maxKeys} keys are claims in flight. ` +
        'Raise maxKeys or lower the concurrency; the record will be retried.',
    );
  }
}
