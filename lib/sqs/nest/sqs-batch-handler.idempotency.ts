import type { ModuleRef } from '@nestjs/core';
import type { IdempotentHandlerRegistry } from '../../idempotency/idempotent-handler.registry';
import type { IdempotencyService } from '../../idempotency/idempotency.service';
import {
  IDEMPOTENT_BATCH_CLAIMS,
  IDEMPOTENT_HANDLER_POLICIES,
} from '../../idempotency/idempotency.constants';
import type { SqsBatchIdempotency } from '../pipeline/sqs-batch-handler.runner';

/**
 * A batch handler's `@Idempotent()` policy and `IdempotencyModule`'s batch claims, found through the app's
 * `ModuleRef` at its first batch (loaded then); `undefined` without the module or without `@Idempotent()`.
 */
export async function batchIdempotencyOf(
  moduleRef: ModuleRef,
  method: Function,
  classRef: Function,
): Promise<SqsBatchIdempotency | undefined> {
  let registry: IdempotentHandlerRegistry;
  let service: IdempotencyService;
  try {
    registry = moduleRef.get(IDEMPOTENT_HANDLER_POLICIES, { strict: false });
    service = moduleRef.get(IDEMPOTENT_BATCH_CLAIMS, { strict: false });
  } catch {
    return undefined; // no IdempotencyModule: nothing is idempotent
  }
  const policy = registry.policyFor(method, classRef);
  return policy && { policy, claims: await service.batchHandlerClaims() };
}
