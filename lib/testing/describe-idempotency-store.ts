import { strict as assert } from 'node:assert';
import { IdempotencyStore } from '../stores/idempotency-store.interface';
import { describeBatchCases } from './describe-batch-cases';
import { describeCoreCases } from './describe-core-cases';
import { describeFingerprintCases } from './describe-fingerprint-cases';
import { KitCaseContext } from './kit-case-context';

/**
 * The store conformance kit: the behaviour every `IdempotencyStore` (and each optional part of it)
 * must have for the idempotency contract to hold. Runner-neutral on purpose: it asserts with
 * `node:assert` and registers cases through the runner's globals or the `runner` option, so it works
 * unchanged on Jest, Vitest and `node:test`.
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

/**
 * Registers the store conformance suite under `describe(name)`.
 *
 * @example Jest, or Vitest with its globals on
 * ```ts
 * import { describeIdempotencyStore } from 'nestjs-idempotent-sqs/testing';
 *
 * describeIdempotencyStore('PgIdempotencyStore', async () => {
 *   const pool = new Pool({ connectionString: process.env.DATABASE_URL });
 *   return { store: new PgIdempotencyStore(pool), dispose: () => pool.end() };
 * });
 * ```
 * @example Vitest without globals
 * ```ts
 * import { afterEach, beforeEach, describe, it } from 'vitest';
 * describeIdempotencyStore('PgIdempotencyStore', factory, { runner: { describe, it, beforeEach, afterEach } });
 * ```
 */
export function describeIdempotencyStore(
  name: string,
  factory: IdempotencyStoreFactory,
  options: DescribeIdempotencyStoreOptions = {},
): void {
  const runner = options.runner ?? runnerFromGlobals();
  const kit = new KitCaseContext(runner, options);
  runner.describe(name, () => {
    runner.beforeEach(async () => {
      kit.fixture = toFixture(await factory());
    });
    runner.afterEach(async () => {
      await kit.fixture?.dispose?.();
    });
    describeCoreCases(kit);
    if (kit.has.fingerprints) describeFingerprintCases(kit);
    if (kit.has.batches) describeBatchCases(kit);
  });
}

function toFixture(made: IdempotencyStore | IdempotencyStoreFixture): IdempotencyStoreFixture {
  const isBareStore = typeof (made as IdempotencyStore).tryAcquire === 'function';
  const fixture = isBareStore ? { store: made as IdempotencyStore } : (made as IdempotencyStoreFixture);
  assert.ok(
    fixture.store && typeof fixture.store.tryAcquire === 'function',
    'describeIdempotencyStore: the factory must return a store or { store, advanceTime?, peers?, dispose? }',
  );
  return fixture;
}

function runnerFromGlobals(): StoreConformanceRunner {
  const globals = globalThis as Partial<StoreConformanceRunner> & { test?: StoreConformanceRunner['it'] };
  const runner = {
    describe: globals.describe,
    it: globals.it ?? globals.test,
    beforeEach: globals.beforeEach,
    afterEach: globals.afterEach,
  };
  const missing = Object.entries(runner).flatMap(([name, fn]) => (typeof fn === 'function' ? [] : [name]));
  if (missing.length > 0) {
    throw new Error(
      `describeIdempotencyStore: no global ${missing.join(', ')}. Run it under Jest (or Vitest with globals: true), ` +
        "or pass the runner's functions: describeIdempotencyStore(name, factory, { runner: { describe, it, beforeEach, afterEach } }).",
    );
  }
  return runner as StoreConformanceRunner;
}
