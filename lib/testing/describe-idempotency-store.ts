import { strict as assert } from 'node:assert';
import { IdempotencyStore } from '../stores/idempotency-store.interface';
import { describeBatchCases } from './describe-batch-cases';
import { describeCoreCases } from './describe-core-cases';
import { describeFingerprintCases } from './describe-fingerprint-cases';
import {
  DescribeIdempotencyStoreOptions,
  IdempotencyStoreFactory,
  IdempotencyStoreFixture,
  KitCaseContext,
  StoreConformanceRunner,
} from './kit-case-context';

/**
 * Registers the store conformance suite under `describe(name)`: the behaviour every `IdempotencyStore`
 * (and each optional part of it) must have for the idempotency contract to hold. Runner-neutral on
 * purpose: it asserts with `node:assert` and registers cases through the runner's globals or the
 * `runner` option, so it works unchanged on Jest, Vitest and `node:test`.
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
      const made: unknown = await factory();
      const fixture =
        typeof (made as IdempotencyStore | null | undefined)?.tryAcquire === 'function'
          ? { store: made as IdempotencyStore }
          : (made as IdempotencyStoreFixture | null | undefined);
      if (typeof fixture?.store?.tryAcquire !== 'function') {
        assert.fail(
          'describeIdempotencyStore: the factory must return a store or { store, advanceTime?, peers?, dispose? }; ' +
            `it returned ${returned(made)}`,
        );
      }
      kit.fixture = fixture;
    });
    runner.afterEach(async () => {
      await kit.fixture?.dispose?.();
    });
    describeCoreCases(kit);
    if (kit.has.fingerprints) describeFingerprintCases(kit);
    if (kit.has.batches) describeBatchCases(kit);
  });
}

/** What a factory returned instead of a store, for the error. */
function returned(made: unknown): string {
  if (made === undefined) return 'undefined (a missing return?)';
  if (made === null || (typeof made !== 'object' && typeof made !== 'function')) return String(made);
  return `${typeof made === 'function' ? 'a function' : 'an object'} with no tryAcquire method, nor a store with one`;
}

function runnerFromGlobals(): StoreConformanceRunner {
  const globals = globalThis as Partial<StoreConformanceRunner> & { test?: StoreConformanceRunner['it'] };
  const { describe, it = globals.test, beforeEach, afterEach } = globals;
  const runner = { describe, it, beforeEach, afterEach };
  const missing = Object.entries(runner).flatMap(([name, fn]) => (typeof fn === 'function' ? [] : [name]));
  if (missing.length > 0) {
    throw new Error(
      `describeIdempotencyStore: no global ${missing.join(', ')}. Run it under Jest (or Vitest with globals: true), ` +
        "or pass the runner's functions: describeIdempotencyStore(name, factory, { runner: { describe, it, beforeEach, afterEach } }).",
    );
  }
  return runner as StoreConformanceRunner;
}
