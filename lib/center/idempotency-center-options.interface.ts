import type { CanActivate, Type } from '@nestjs/common';

/** Options of `IdempotencyCenterModule.forRoot()`. */
export interface IdempotencyCenterOptions {
  /**
   * Route of the Center: the page is at `<path>/ui`, the JSON API at `<path>/api/v1/...` (and the
   * counters, as in 0.1, at `<path>`). Default `'idempotency'`.
   */
  path?: string;
  /**
   * Guards protecting every route (e.g. your admin guard). Required: the Center shows your traffic,
   * its keys and failure reasons, so it refuses to start unguarded unless `allowAnonymous` says so.
   */
  guards?: Array<Type<CanActivate> | CanActivate>;
  /** Serve without guards (local development, demos). Default `false`. */
  allowAnonymous?: boolean;
  /**
   * Show `h:` and a hash instead of every idempotency key (page and API), as the record log's
   * `hashKeys` does, for keys that may carry personal data. A key lookup still works: type the key,
   * the Center matches records by its hash. Default `false`.
   */
  hashKeys?: boolean;
  /** How long a key lookup waits for the store before showing an error. Default 5,000 ms. */
  lookupTimeoutMs?: number;
}

/** The options with their defaults applied. */
export interface ResolvedCenterOptions {
  hashKeys: boolean;
  lookupTimeoutMs: number;
}

/** Options of `IdempotencyCenterModule.forRoot()`, resolved. */
export const IDEMPOTENCY_CENTER_OPTIONS = Symbol('IDEMPOTENCY_CENTER_OPTIONS');
