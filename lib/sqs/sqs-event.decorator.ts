// Users may decorate event classes before anything loads Nest (which loads the polyfill).
import 'reflect-metadata';
import type { Type } from '@nestjs/common';
import { SQS_EVENT_METADATA, SQS_EVENT_OPTIONS_METADATA } from './sqs.constants';
import { describeValue, readOptions } from '../common/known-options';
import { SqsConfigurationError } from '../common/sqs-idempotency.error';
import type { SqsBodyDecoder } from './sqs-body.decoder';

/** Options of `@SqsEvent()`. */
export interface SqsEventOptions {
  /**
   * This class's own decoder (`'text'`, `'base64'`, `'base64-text'`, a function): the class gets
   * `{ body: value }`. Its route must be known without reading the body.
   */
  decoder?: SqsBodyDecoder;
  /** How `SqsProducer` writes a body for a decoder function: its inverse. */
  encoder?: (event: any) => string;
}

/** The type name reserved for fallback handlers (`@SqsFallbackHandler()`). */
export const SQS_FALLBACK_EVENT_TYPE = '*';

/**
 * Names a class's event type: the discriminator's value that routes to it. Default: the class name in
 * snake_case (`OrderCreated` → `order_created`). `options.decoder` reads its messages as text or bytes.
 *
 * @example
 * ```ts
 * @SqsEvent('order_created')
 * export class OrderCreated { @IsString() id!: string; }
 * ```
 */
export function SqsEvent(type?: string, options?: SqsEventOptions): ClassDecorator;
export function SqsEvent(options: SqsEventOptions): ClassDecorator;
export function SqsEvent(
  typeOrOptions?: string | SqsEventOptions,
  maybeOptions?: SqsEventOptions,
): ClassDecorator {
  const type = typeof typeOrOptions === 'object' ? undefined : typeOrOptions;
  if (type !== undefined && (typeof type !== 'string' || type.length === 0)) {
    throw new SqsConfigurationError(
      `@SqsEvent(type): type must be a non-empty string such as 'order_created', got ${describeValue(type)}.`,
    );
  }
  if (type === SQS_FALLBACK_EVENT_TYPE) {
    throw new SqsConfigurationError(
      `@SqsEvent('${SQS_FALLBACK_EVENT_TYPE}'): that name is reserved for @SqsFallbackHandler(); pick another.`,
    );
  }
  const options = readOptions(
    typeof typeOrOptions === 'object' ? typeOrOptions : maybeOptions,
    { decoder: ['string', 'function'], encoder: 'function' },
    '@SqsEvent() options',
    SqsConfigurationError,
  );
  return (target) => {
    Reflect.defineMetadata(SQS_EVENT_METADATA, type ?? toSnakeCase(target.name), target);
    Reflect.defineMetadata(SQS_EVENT_OPTIONS_METADATA, options, target);
  };
}

/** The `@SqsEvent()` options of `eventClass` (its own, not a parent's). */
export function getSqsEventOptions(eventClass: Type<unknown>): SqsEventOptions {
  return (
    (Reflect.getOwnMetadata(SQS_EVENT_OPTIONS_METADATA, eventClass) as SqsEventOptions | undefined) ?? {}
  );
}

/** The event type of `eventClass`: its `@SqsEvent()` name, else its class name in snake_case. */
export function getSqsEventType(eventClass: Type<unknown>): string {
  // getOwnMetadata: a subclass without its own @SqsEvent is a different event, named after itself.
  return (
    (Reflect.getOwnMetadata(SQS_EVENT_METADATA, eventClass) as string | undefined) ??
    toSnakeCase(eventClass.name)
  );
}

/** `OrderCreated` → `order_created`, `HTTPRequestSent` → `http_request_sent`, `Order2Paid` → `order2_paid`. */
export function toSnakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}
