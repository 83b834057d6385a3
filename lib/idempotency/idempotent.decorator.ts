import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { IDEMPOTENT_METADATA } from './idempotency.constants';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IDEMPOTENT_OPTION_KINDS, IdempotentOptions } from './idempotency-options.interface';
import { checkOptions, describeValue } from '../common/known-options';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';

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
  const decorate = applyDecorators(
    SetMetadata(IDEMPOTENT_METADATA, options),
    UseInterceptors(IdempotencyInterceptor),
  );
  // Checked where it is applied, so the error names the handler: a typo'd option (`kepPath`) would
  // otherwise run with the default and take distinct events for duplicates.
  return ((target: object, method?: string | symbol, descriptor?: PropertyDescriptor) => {
    const owner = typeof target === 'function' ? target.name : target.constructor.name;
    const where = `@Idempotent() on ${method === undefined ? owner : `${owner}.${String(method)}`}`;
    if (
      typeof keyPathOrOptions !== 'string' &&
      (typeof keyPathOrOptions !== 'object' || keyPathOrOptions === null || Array.isArray(keyPathOrOptions))
    ) {
      throw new IdempotencyConfigurationError(
        `${where}: expected a key path (@Idempotent('metadata.eventId')) or an options object ` +
          `(@Idempotent({ keyPath: 'orderId' })), got ${describeValue(keyPathOrOptions)}.`,
      );
    }
    checkOptions(
      options,
      IDEMPOTENT_OPTION_KINDS,
      where,
      (message) => new IdempotencyConfigurationError(message),
    );
    return decorate(target, method as string | symbol, descriptor as PropertyDescriptor);
  }) as MethodDecorator & ClassDecorator;
}
