import type { CanActivate, Type } from '@nestjs/common';

/** Options of `IdempotencyCenterModule.forRoot()`. */
export interface IdempotencyCenterOptions {
  /** Route of the JSON endpoint; the page is at `<path>/ui`. Default `'idempotency'`. */
  path?: string;
  /**
   * Guards protecting both routes (e.g. your admin guard). Required: the counters describe your
   * traffic, so the Center refuses to start unguarded unless `allowAnonymous` says so.
   */
  guards?: Array<Type<CanActivate> | CanActivate>;
  /** Serve without guards (local development, demos). Default `false`. */
  allowAnonymous?: boolean;
}
