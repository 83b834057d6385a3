import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { messageCallOf } from './idempotency-state';

/**
 * Injects the resolved idempotency key of the current message (`undefined` when the handler is
 * not idempotent or the message had no key and `requireKey` is off). Also on `ctx.state.idempotencyKey`.
 *
 * @example
 * ```ts
 * @SqsMessageHandler(OrderCreated)
 * @Idempotent()
 * async onOrderCreated(event: OrderCreated, ctx: SqsContext, @IdempotencyKey() key: string) { ... }
 * ```
 */
export const IdempotencyKey = createParamDecorator(
  (_data: unknown, context: ExecutionContext) => messageCallOf(context)?.state.idempotencyKey,
);
