import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { IDEMPOTENT_METADATA } from './idempotency.constants';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import type { IdempotentOptions } from './idempotency-options.interface';

/**
 * Runs the handler once per logical event. Before it runs, the key is claimed in the store:
 * a first sighting runs; a duplicate of a completed event is acked without running; a duplicate of
 * an event still in flight fails on purpose and is redelivered later. On a method, or on a class
 * (every message handler of the class).
 *
 * @param keyPathOrOptions a dot path to the key in the payload (`'metadata.eventId'`), or options
 *   overriding the module's (`keyPath` or `key()`, `ttl`, `inProgressTtl`, `requireKey`, `scope`).
 *
 * @example
 * ```ts
 * @SqsMessageHandler(OrderCreated)
 * @Idempotent()                       // key: payload.id
 * async onOrderCreated(event: OrderCreated) { ... }
 *
 * @SqsMessageHandler(PaymentCaptured)
 * @Idempotent({ key: (e: PaymentCaptured) => `${e.paymentId}:${e.attempt}`, ttl: 7 * 86_400_000 })
 * async onPaymentCaptured(event: PaymentCaptured) { ... }
 * ```
 */
export function Idempotent(
  keyPathOrOptions: string | IdempotentOptions = {},
): MethodDecorator & ClassDecorator {
  const options: IdempotentOptions =
    typeof keyPathOrOptions === 'string' ? { keyPath: keyPathOrOptions } : { ...keyPathOrOptions };
  return applyDecorators(SetMetadata(IDEMPOTENT_METADATA, options), UseInterceptors(IdempotencyInterceptor));
}
