import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { IDEMPOTENT_METADATA } from './idempotency.constants';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import type { IdempotentOptions } from './idempotency-options.interface';

/**
 * Runs the handler once per logical event: its key is claimed first; a duplicate of a completed event
 * is acked without running, one still in flight fails and is redelivered. On a method or a class.
 *
 * @param keyPathOrOptions the key's dot path (`'metadata.eventId'`), or options overriding the module's.
 * @example
 * ```ts
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
