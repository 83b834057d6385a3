import type { CanActivate, Type } from '@nestjs/common';

/** Options of `IdempotencyCenterModule.forRoot()`. */
export interface IdempotencyCenterOptions {
  /** The Center's route: the page at `<path>/ui`, the API at `<path>/api/v1/...`. Default `'idempotency'`. */
  path?: string;
  /** Guards of every route (your admin guard): required, unless `allowAnonymous`, since the Center shows your traffic. */
  guards?: Array<Type<CanActivate> | CanActivate>;
  /** Serve without guards (local development, demos). Default `false`. */
  allowAnonymous?: boolean;
  /** Show `h:<hash>` instead of every key, as the record log's `hashKeys` does; a lookup still works. Default `false`. */
  hashKeys?: boolean;
  /** How long a key lookup waits for the store before showing an error. Default 5,000 ms. */
  lookupTimeoutMs?: number;
}

/** The options with their defaults applied. */
export type ResolvedCenterOptions = Required<Pick<IdempotencyCenterOptions, 'hashKeys' | 'lookupTimeoutMs'>>;

/** Options of `IdempotencyCenterModule.forRoot()`, resolved. */
export const IDEMPOTENCY_CENTER_OPTIONS = Symbol('IDEMPOTENCY_CENTER_OPTIONS');
