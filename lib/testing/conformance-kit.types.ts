import { IdempotencyStore } from '../stores/idempotency-store.interface';

/*
 * The conformance kit's option and fixture types, in a file of their own so that the kit's cases
 * and its entry point both import them without importing each other.
 */

/** The four functions of a test runner the kit registers its cases with. */
export interface StoreConformanceRunner {
  describe(name: string, body: () => void): unknown;
  it(name: string, body: () => Promise<void>): unknown;
  beforeEach(body: () => Promise<void>): unknown;
  afterEach(body: () => Promise<void>): unknown;
}

/** What a factory may return instead of a bare store: the store plus ways to drive it. */
export interface IdempotencyStoreFixture {
  /** The store under test. */
  store: IdempotencyStore;
  /** Moves the store's fake clock forward. Without it, the expiry cases wait out short real TTLs. */
  advanceTime?(ms: number): void | Promise<void>;
  /** More clients of the same backing data, to spread the concurrent claimers over as in production. */
  peers?: IdempotencyStore[];
  /** Called after each case: close connections, drop tables. */
  dispose?(): void | Promise<void>;
}

/** Builds a fresh store (or fixture) for each case. */
export type IdempotencyStoreFactory = () =>
  IdempotencyStore | IdempotencyStoreFixture | Promise<IdempotencyStore | IdempotencyStoreFixture>;

/** Options of {@link describeIdempotencyStore}. */
export interface DescribeIdempotencyStoreOptions {
  /** The runner's functions. Default: the globals `describe`, `it`, `beforeEach`, `afterEach`. */
  runner?: StoreConformanceRunner;
  /** The store has `extend` (the lease heartbeat): check it. Default `true`. */
  extend?: boolean;
  /** The store has `inspect` (the Idempotency Center's read-only key lookup): check it. Default `true`. */
  inspect?: boolean;
  /** The store keeps payload fingerprints (`tryAcquireWithFingerprint`): check it. Default `true`. */
  fingerprints?: boolean;
  /** The store has the batch methods (`tryAcquireMany`, `markCompleteMany`): check them. Default `true`. */
  batches?: boolean;
  /** Number of concurrent claimers of one key. Default 100. */
  concurrency?: number;
  /**
   * The short TTL (ms) of the expiry cases, waited out in real time without `advanceTime`; raise it
   * for stores whose expiry is coarse. Default 50. A case that fails after a pause as long (a loaded
   * machine) runs again with a 4x longer one, at most twice.
   */
  shortTtlMs?: number;
  /** Prefix of every key the kit uses (each run adds a random part). Default `'conformance:'`. */
  keyPrefix?: string;
}
