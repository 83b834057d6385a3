import { Logger } from '@nestjs/common';
import {
  AcquireAnswer,
  AcquireResult,
  FingerprintClaim,
  IdempotencyKeyInspection,
  IdempotencyStore,
  IdempotencyStoreWarning,
} from '../idempotency-store.interface';
import { keptClaimAnswer, keptClaimOf, liveKeyInspection } from '../store-helpers';
import { readOptions } from '../../common/known-options';
import { IdempotencyConfigurationError } from '../../common/sqs-idempotency.error';

/** Options of {@link InMemoryIdempotencyStore}. */
export interface InMemoryIdempotencyStoreOptions {
  /** Milliseconds clock; inject a fake one to test expiry without sleeping. Default: monotonic time. */
  clock?: () => number;
  /**
   * Upper bound on remembered keys: when full, the completed key claimed longest ago is evicted (its
   * window ends early; warned once); all in flight, a claim rejects. Default 100,000; `Infinity`: none.
   */
  maxKeys?: number;
}

/** The default `maxKeys`. */
export const DEFAULT_MAX_KEYS = 100_000;

/** Entries examined per new key by the incremental sweep. */
const SWEEP_STEP = 4;

/**
 * The default store: one process, no dependencies. Atomic because every method decides and writes
 * synchronously. Right for tests, single instances and per-sandbox Lambda dedup. Expired keys are
 * swept in proportion to insertions (no timers), and `maxKeys` bounds the heap.
 */
export class InMemoryIdempotencyStore implements IdempotencyStore {
  /** Its keys live in this process only, so no other service can take them for its own. */
  readonly shared = false;
  /** A claim's fingerprint is kept in a map beside its entry. */
  readonly keepsFingerprints = true;
  /**
   * Every key, in order of its last claim: a completed key's expiry (`Infinity`: never) or an in-flight
   * key's `Claim`, in one map (`bench/PROFILE.md`: "... one map in the in-memory store").
   */
  private readonly entries = new Map<string, number | Claim>();
  /** Keys claimed with a fingerprint: `<fingerprint>` or `<fingerprint> <message id>`, kept through completion. */
  private readonly fingerprints = new Map<string, string>();
  private readonly clock: () => number;
  private readonly maxKeys: number;
  private sweepCursor: Iterator<[string, number | Claim]> | undefined;
  /** Where the last eviction (`maxKeys`) stopped. */
  private evictionCursor: Iterator<[string, number | Claim]> | undefined;
  /** No key expires before this, so the sweep rests until then; recomputed at each lap. */
  private earliestExpiry = Infinity;
  /** The lowest expiry the current lap has met or seen written: the next `earliestExpiry`. */
  private lapEarliestExpiry = Infinity;
  private evictedCount = 0;
  private readonly found: IdempotencyStoreWarning[] = [];

  constructor(given: InMemoryIdempotencyStoreOptions = {}) {
    const where = 'InMemoryIdempotencyStore options';
    const options = readOptions(given, { clock: 'function', maxKeys: 'number' }, where);
    this.clock = options.clock ?? (() => performance.now());
    const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
    if (!(maxKeys === Infinity || (Number.isInteger(maxKeys) && maxKeys > 0))) {
      throw new IdempotencyConfigurationError(
        `InMemoryIdempotencyStore: maxKeys must be a positive integer or Infinity, got ${options.maxKeys}`,
      );
    }
    this.maxKeys = maxKeys;
  }

  /**
   * The timeline of one key:
   *
   *   absent ──tryAcquire──▶ IN_PROGRESS(token, lease) ──markComplete(token)──▶ COMPLETED(ttl) ──ttl──▶ absent
   *                               │  └──forget(token)──────────────────────────────────────────────▶ absent
   *                               └──lease expires (worker crashed)──▶ absent: the next claimer wins
   *
   * A live entry answers for itself; an expired one is treated as absent and overwritten.
   */
  tryAcquire(key: string, ttlMs: number, token: string): Promise<AcquireResult>;
  /** With `claim`, the fingerprint is kept with the key in the same synchronous step. */
  tryAcquire(key: string, ttlMs: number, token: string, claim?: FingerprintClaim): Promise<AcquireAnswer>;
  async tryAcquire(key: string, ttlMs: number, token: string, claim?: FingerprintClaim) {
    const kept = claim ? keptClaimOf(claim, 'InMemoryIdempotencyStore') : undefined;
    const result = this.acquire(key, ttlMs, token);
    if (kept === undefined) return result;
    if (result === AcquireResult.ACQUIRED) {
      this.fingerprints.set(key, kept);
      return result;
    }
    const held = this.fingerprints.get(key);
    return held === undefined ? result : keptClaimAnswer(result, held);
  }

  private acquire(key: string, ttlMs: number, token: string): AcquireResult {
    const now = this.clock();
    const held = this.entries.get(key);
    if (held !== undefined && expiryIn(held) > now) {
      return typeof held === 'number' ? AcquireResult.COMPLETED : AcquireResult.IN_PROGRESS;
    }
    if (held === undefined) this.admit(now);
    else this.entries.delete(key); // re-added below, at the back: it is the newest write
    const claim = new Claim(token, expiryOf(now, ttlMs));
    this.entries.set(key, claim);
    this.lowerBounds(claim.expiresAt);
    // An expired claim's fingerprint is not this claim's.
    if (this.fingerprints.size !== 0) this.fingerprints.delete(key);
    return AcquireResult.ACQUIRED;
  }

  /** Completes `token`'s claim, or an expired one nobody took over; `false` when another attempt holds the key. */
  async markComplete(key: string, ttlMs: number, token: string): Promise<boolean> {
    const now = this.clock();
    const held = this.entries.get(key);
    const own = held !== undefined && isClaimOf(held, token);
    if (held === undefined) this.admit(now);
    else if (!own && expiryIn(held) > now) return false;
    // Completed in place, keeping its place in the map (`bench/PROFILE.md`, "A completion in place");
    // a claim the eviction walk passed, or another attempt's expired entry, goes to the back.
    else if (!own || held.passedByEviction) this.entries.delete(key);
    // The fingerprint stays with its own claim's completion; an expired claim of another attempt takes its own away.
    if (!own && this.fingerprints.size !== 0) this.fingerprints.delete(key);
    const expiresAt = expiryOf(now, ttlMs);
    this.entries.set(key, expiresAt);
    this.lowerBounds(expiresAt);
    return true;
  }

  /** Releases the claim of `token`; `false` when another attempt owns the key now. */
  async forget(key: string, token: string): Promise<boolean> {
    const held = this.entries.get(key);
    if (held === undefined) return true;
    if (expiryIn(held) > this.clock() && !isClaimOf(held, token)) return false;
    this.remove(key);
    return true;
  }

  /** Renews the lease of `token`; `false` when the lease already expired or another attempt owns it. */
  async extend(key: string, ttlMs: number, token: string): Promise<boolean> {
    const now = this.clock();
    const held = this.entries.get(key);
    if (held === undefined || !isClaimOf(held, token) || held.expiresAt <= now) return false;
    held.expiresAt = expiryOf(now, ttlMs); // in place: a renewal is no new write, the key keeps its place
    this.lowerBounds(held.expiresAt);
    return true;
  }

  /** What the store holds for `key` (read-only: nothing moves, nothing is swept). */
  async inspect(key: string): Promise<IdempotencyKeyInspection> {
    const now = this.clock();
    const held = this.entries.get(key);
    const expiresAt = held === undefined ? -Infinity : expiryIn(held);
    if (expiresAt <= now) return { state: 'UNKNOWN' };
    return liveKeyInspection(typeof held === 'number', expiresAt === Infinity ? undefined : expiresAt - now);
  }

  /** Number of remembered keys (live and not yet swept). */
  get size(): number {
    return this.entries.size;
  }

  /** Keys evicted early because `maxKeys` was reached. */
  get evictions(): number {
    return this.evictedCount;
  }

  /** Set once `maxKeys` first forced an eviction (read by the Idempotency Center). */
  get warnings(): readonly IdempotencyStoreWarning[] {
    return this.found;
  }

  /** Deletes every expired entry now (the incremental sweep does this gradually on its own). */
  sweepExpired(): void {
    this.sweepCursor = undefined;
    this.sweep(this.clock(), Infinity);
  }

  /** Forgets everything (tests). */
  clear(): void {
    this.entries.clear();
    this.fingerprints.clear();
    this.sweepCursor = undefined;
    this.evictionCursor = undefined;
    this.earliestExpiry = Infinity;
  }

  /** Keeps the sweep's bounds at or below an expiry just written. */
  private lowerBounds(expiresAt: number): void {
    if (expiresAt < this.earliestExpiry) this.earliestExpiry = expiresAt;
    if (expiresAt < this.lapEarliestExpiry) this.lapEarliestExpiry = expiresAt;
  }

  /** Before a new key is added: reclaim a few expired entries, and make room under `maxKeys`. */
  private admit(now: number): void {
    this.sweep(now, SWEEP_STEP);
    if (this.entries.size >= this.maxKeys) this.evictOldest(now);
  }

  private sweep(now: number, budget: number): void {
    if (now < this.earliestExpiry) return;
    for (let examined = 0; examined < budget; examined++) {
      if (this.sweepCursor === undefined) {
        this.sweepCursor = this.entries.entries();
        this.lapEarliestExpiry = Infinity;
      }
      const next = this.sweepCursor.next();
      if (next.done) {
        // Every key was examined in this lap or written during it: the lap's lowest bounds them all.
        this.sweepCursor = undefined; // the next call starts the next lap
        this.earliestExpiry = this.lapEarliestExpiry;
        return;
      }
      const [key, held] = next.value;
      const expiresAt = expiryIn(held);
      if (expiresAt <= now) this.remove(key);
      else if (expiresAt < this.lapEarliestExpiry) this.lapEarliestExpiry = expiresAt;
    }
  }

  /**
   * Frees one slot (the oldest expired or completed entry; refuses when all are in flight), walking on
   * from where the last eviction stopped; a key passed in flight moves to the back on completion.
   */
  private evictOldest(now: number): void {
    for (let lap = 0; lap < 2; lap++) {
      this.evictionCursor ??= this.entries.entries();
      for (let next = this.evictionCursor.next(); !next.done; next = this.evictionCursor.next()) {
        const [key, held] = next.value;
        const live = expiryIn(held) > now;
        if (live && typeof held !== 'number') {
          held.passedByEviction = true;
          continue;
        }
        if (live) this.evicted();
        this.remove(key);
        return;
      }
      this.evictionCursor = undefined; // the end of the map: one more walk from the front
    }
    throw new Error(
      `InMemoryIdempotencyStore is full: all ${this.maxKeys} keys are claims in flight. ` +
        'Raise maxKeys or lower the concurrency; the record will be retried.',
    );
  }

  private evicted(): void {
    this.evictedCount++;
    if (this.found.length > 0) return;
    const message =
      `reached maxKeys (${this.maxKeys}) and evicts the oldest completed keys: their dedup window ends early, ` +
      'so a late duplicate of an evicted event runs its handler again. Raise maxKeys (about 125 bytes of heap ' +
      'per key), shorten ttl, or use a shared store such as RedisIdempotencyStore.';
    this.found.push({ code: 'memory.max-keys', setting: `maxKeys ${this.maxKeys}`, message });
    new Logger('InMemoryIdempotencyStore').warn(`InMemoryIdempotencyStore ${message}`);
  }

  private remove(key: string): void {
    this.entries.delete(key);
    if (this.fingerprints.size !== 0) this.fingerprints.delete(key);
  }
}

/** A key in progress: the attempt that holds it, and when its lease ends. */
class Claim {
  constructor(
    readonly token: string,
    /** Renewed in place by `extend`. */
    public expiresAt: number,
  ) {}

  /** Skipped in flight by the eviction walk, which is past it: its completion goes to the back. */
  passedByEviction = false;
}

/** When a remembered key is forgotten, or its claim's lease ends. */
function expiryIn(held: number | Claim): number {
  return typeof held === 'number' ? held : held.expiresAt;
}

/** Whether `held` is the live or expired claim of `token`. */
function isClaimOf(held: number | Claim, token: string): held is Claim {
  return typeof held !== 'number' && held.token === token;
}

/** Whole milliseconds rounded up, kept by V8 as a small integer inside the map entry. */
function expiryOf(now: number, ttlMs: number): number {
  return ttlMs === Infinity ? Infinity : Math.ceil(now + ttlMs);
}
