// Users may decorate event classes before anything loads Nest (which loads the polyfill).
import 'reflect-metadata';
import type { Type } from '@nestjs/common';
import { SQS_EVENT_METADATA } from '../constants';

/**
 * Names the event type of a class: the value of the message's discriminator (body field `type` by
 * default) that routes to it. Optional: without it the type is the class name in snake_case
 * (`OrderCreated` → `order_created`).
 *
 * @example
 * ```ts
 * @SqsEvent('order_created')
 * export class OrderCreated { @IsString() id!: string; }
 * ```
 */
export function SqsEvent(type?: string): ClassDecorator {
  if (type !== undefined && (typeof type !== 'string' || type.length === 0)) {
    throw new TypeError('@SqsEvent(type): type must be a non-empty string');
  }
  return (target) => {
    Reflect.defineMetadata(SQS_EVENT_METADATA, type ?? toSnakeCase(target.name), target);
  };
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
