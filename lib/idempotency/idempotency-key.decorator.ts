import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { messageCallOf } from './idempotency-state';

/**
 * Injects the message's resolved idempotency key (`undefined` without one). Also `ctx.state.idempotencyKey`.
 *
 * @example
 * ```ts
 * async onOrderCreated(event: OrderCreated, ctx: SqsContext, @IdempotencyKey() key: string) { ... }
 * ```
 */
export const IdempotencyKey = createParamDecorator(
  (_data: unknown, context: ExecutionContext) => messageCallOf(context)?.state.idempotencyKey,
);
