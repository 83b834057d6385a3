// Users may decorate event classes before anything loads Nest (which loads the polyfill).
import 'reflect-metadata';
import type { Type } from '@nestjs/common';
import { SQS_EVENT_METADATA, SQS_EVENT_OPTIONS_METADATA } from './sqs.constants';
import type { SqsBodyDecoder } from './decoding/body-decoder';

/** Options of `@SqsEvent()`. */
export interface SqsEventOptions {
  /**
   * How this class's messages are read, overriding the queue's decoder: `'text'`, `'base64'`,
   * `'base64-text'` or a function give the class `{ body: value }` (declare and validate `body`).
   * The route must be known without reading the body: the queue has this one event class, an
   * envelope names the type, or the discriminator is a message attribute; otherwise the queue's
   * decoder reads the body to find the type first.
   */
  decoder?: SqsBodyDecoder;
  /**
   * How `SqsProducer` writes the body of this class when its `decoder` is a function: the inverse
   * of the decoder. Built-in decoders need none.
   */
  encoder?: (event: any) => string;
}

/** The type name reserved for fallback handlers (`@SqsFallbackHandler()`). */
export const SQS_FALLBACK_EVENT_TYPE = '*';

/**
 * Names the event type of a class: the value of the message's discriminator (body field `type` by
 * default, or what an envelope names: EventBridge `detail-type`, CloudEvents `type`) that routes to
 * it. Optional: without it the type is the class name in snake_case (`OrderCreated` →
 * `order_created`). `options.decoder` reads its messages as text or bytes instead of JSON.
 *
 * @example
 * ```ts
 * @SqsEvent('order_created')
 * export class OrderCreated { @IsString() id!: string; }
 *
 * @SqsEvent('greeting', { decoder: 'text' })       // the body "Hello from SQS!" → { body: 'Hello from SQS!' }
 * export class Greeting { @IsString() @MaxLength(140) body!: string; }
 * ```
 */
export function SqsEvent(type?: string, options?: SqsEventOptions): ClassDecorator;
export function SqsEvent(options: SqsEventOptions): ClassDecorator;
export function SqsEvent(
  typeOrOptions?: string | SqsEventOptions,
  maybeOptions?: SqsEventOptions,
): ClassDecorator {
  const type = typeof typeOrOptions === 'object' ? undefined : typeOrOptions;
  const options = typeof typeOrOptions === 'object' ? typeOrOptions : maybeOptions;
  if (type !== undefined && (typeof type !== 'string' || type.length === 0)) {
    throw new TypeError('@SqsEvent(type): type must be a non-empty string');
  }
  if (type === SQS_FALLBACK_EVENT_TYPE) {
    throw new TypeError(
      `@SqsEvent('${SQS_FALLBACK_EVENT_TYPE}'): that name is reserved for @SqsFallbackHandler(); pick another.`,
    );
  }
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new TypeError('@SqsEvent(type, options): options must be an object such as { decoder: "text" }');
  }
  return (target) => {
    Reflect.defineMetadata(SQS_EVENT_METADATA, type ?? toSnakeCase(target.name), target);
    if (options !== undefined) Reflect.defineMetadata(SQS_EVENT_OPTIONS_METADATA, options, target);
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
