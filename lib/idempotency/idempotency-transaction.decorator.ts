import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { messageCallOf } from './idempotency-state';

/**
 * Injects a transactional handler's transaction (`pg`'s `PoolClient`, TypeORM's `EntityManager`):
 * its writes commit with the message's completion, or not at all. Also `ctx.state.transaction`.
 *
 * @example
 * ```ts
 * async onOrderCreated(event: OrderCreated, @IdempotencyTransaction() tx: PoolClient) { ... }
 * ```
 */
export const IdempotencyTransaction = createParamDecorator(
  (_data: unknown, context: ExecutionContext): unknown => messageCallOf(context)?.state.transaction,
);
