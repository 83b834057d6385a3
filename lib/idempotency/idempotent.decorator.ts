import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { IDEMPOTENT_METADATA } from './idempotency.constants';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IDEMPOTENT_OPTION_SHAPE, IdempotentOptions } from './idempotency-options.interface';
import { describeValue, readOptions } from '../common/known-options';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';

/** Whether an `@Idempotent()` of this process declared a fingerprint (its code then loads at bootstrap). */
let fingerprintDeclared = false;

/** Whether any `@Idempotent()` applied so far in this process declares a fingerprint. */
export function fingerprintsDeclared(): boolean {
  return fingerprintDeclared;
}

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
  // Read where it is applied, so an error names the handler: a typo'd option (`kepPath`) would
  // otherwise run with the default and take distinct events for duplicates.
  return ((target: object, method?: string | symbol, descriptor?: PropertyDescriptor) => {
    const owner = typeof target === 'function' ? target.name : target.constructor.name;
    const where = `@Idempotent() on ${method === undefined ? owner : `${owner}.${String(method)}`}`;
    const given: unknown = keyPathOrOptions;
    if (typeof given !== 'string' && (typeof given !== 'object' || given === null || Array.isArray(given))) {
      throw new IdempotencyConfigurationError(
        `${where}: expected a key path (@Idempotent('metadata.eventId')) or an options object ` +
          `(@Idempotent({ keyPath: 'orderId' })), got ${describeValue(given)}.`,
      );
    }
    const options =
      typeof given === 'string'
        ? { keyPath: given }
        : readOptions(
            given as IdempotentOptions,
            IDEMPOTENT_OPTION_SHAPE,
            where,
            IdempotencyConfigurationError,
          );
    if (options.fingerprint !== undefined && options.fingerprint !== false) fingerprintDeclared = true;
    return applyDecorators(
      SetMetadata(IDEMPOTENT_METADATA, options),
      UseInterceptors(IdempotencyInterceptor),
    )(target, method as string | symbol, descriptor as PropertyDescriptor);
  }) as MethodDecorator & ClassDecorator;
}
