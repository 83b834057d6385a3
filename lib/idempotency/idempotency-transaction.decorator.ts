import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { messageCallOf } from './idempotency-state';

/**
 * Injects the database transaction of a transactional handler (`@Idempotent({ transactional: true })`):
 * the handler's writes through it commit together with the message's completion, or not at all.
 * Its type is the store adapter's (`PoolClient` of `pg`, TypeORM's `EntityManager`): annotate the
 * parameter with it. `undefined` when the handler is not transactional. Also on `ctx.state.transaction`.
 *
 * @example
 * ```ts
 * @SqsMessageHandler(OrderCreated)
 * @Idempotent({ transactional: true })
 * async onOrderCreated(event: OrderCreated, @IdempotencyTransaction() tx: PoolClient) {
 *   await tx.query('INSERT INTO shipments (order_id) VALUES ($1)', [event.orderId]);
 * }
 * ```
 */
export const IdempotencyTransaction = createParamDecorator(
  (_data: unknown, context: ExecutionContext): unknown => messageCallOf(context)?.state.transaction,
);
