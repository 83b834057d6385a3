import { randomUUID } from 'node:crypto';
import type { Type } from '@nestjs/common';
import { ClassTransformOptions, instanceToPlain } from 'class-transformer';
import { parseKeyPath, readKeyPath } from '../../idempotency/idempotency-key';
import { RAW_BODY_FIELD, ResolvedBodyDecoder, resolveBodyDecoder } from '../sqs-body.decoder';
import { getSqsEventOptions, getSqsEventType } from '../sqs-event.decorator';
import type { SqsDiscriminator } from '../sqs-module-options.interface';
import { SqsProducerError } from './sqs-producer.errors';
import type { SqsAttributeInput } from './sqs-producer.options';

/**
 * Writes an event as its queue's consumer reads it (the inverse of decoding): the body by the
 * class's decoder, the type where the discriminator reads it, a CloudEvent for a CloudEvents queue.
 */
export interface EncodingTarget {
  /** `queue "orders"`, `topic arn:...`: for errors. */
  readonly description: string;
  readonly discriminator: SqsDiscriminator;
  /** Whether the consumer reads the type from the message (not a queue of one event class). */
  readonly carriesType: boolean;
  /** The queue's decoder (`json` unless configured). */
  readonly decoder: ResolvedBodyDecoder;
  /** The queue takes CloudEvents. */
  readonly cloudEvents: boolean;
  readonly cloudEventsSource: string;
  readonly transformOptions?: ClassTransformOptions;
}

/** An SQS or SNS message attribute, as the SDKs take them (and as a caller may give one). */
type OutgoingAttribute = Exclude<SqsAttributeInput, string | number | Uint8Array>;

/** The class of an event; plain objects are refused (their class, hence their type, is unknown). */
export function eventClassOf(event: unknown, where: string): Type<unknown> {
  const constructor = (event as object | null)?.constructor;
  if (
    typeof event !== 'object' ||
    typeof constructor !== 'function' ||
    constructor === Object ||
    Array.isArray(event)
  ) {
    throw new SqsProducerError(
      `${where}: send an instance of an event class (new OrderCreated(), or plainToInstance(OrderCreated, data)), ` +
        `not ${event === null ? 'null' : Array.isArray(event) ? 'an array' : typeof event === 'object' ? 'a plain object' : typeof event}: ` +
        'its class names its type and how its body is written.',
    );
  }
  return constructor as Type<unknown>;
}

export function encodeEvent(
  event: object,
  target: EncodingTarget,
  key: string | undefined,
  extraAttributes: Record<string, SqsAttributeInput> | undefined,
): { body: string; attributes: Record<string, OutgoingAttribute>; size: number } {
  const eventClass = eventClassOf(event, `SqsProducer (${target.description})`);
  const type = getSqsEventType(eventClass);
  const options = getSqsEventOptions(eventClass);
  const decoder = resolveBodyDecoder(options.decoder, `@SqsEvent() of ${eventClass.name}`, target.decoder);
  const attributes = toAttributes(extraAttributes);
  // Where the consumer reads the type: a message attribute, a body field, or nowhere.
  const { attribute, field } = (
    target.carriesType && typeof target.discriminator === 'object' ? target.discriminator : {}
  ) as { attribute?: string; field?: string };
  if (attribute !== undefined) attributes[attribute] = { DataType: 'String', StringValue: type };

  let body: string;
  if (target.cloudEvents) {
    const data = cloudEventData(event, eventClass, decoder, target);
    body = JSON.stringify({
      specversion: '1.0',
      id: key ?? randomUUID(),
      source: target.cloudEventsSource,
      type,
      time: new Date().toISOString(),
      ...data,
    });
  } else if (decoder.name === 'json') {
    const plain = instanceToPlain(event, target.transformOptions) as Record<string, unknown>;
    if (field !== undefined) writeType(plain, field, type, eventClass, target);
    body = JSON.stringify(plain);
  } else {
    if (field !== undefined) {
      throw new SqsProducerError(
        `SqsProducer (${target.description}): ${eventClass.name} is written as ${decoder.name}, which cannot carry ` +
          `its type in the body field "${field}"; route the queue by a message attribute ` +
          "(discriminator: { attribute: 'eventType' }).",
      );
    }
    body = rawBody(event, eventClass, decoder, options.encoder);
  }
  return { body, attributes, size: sizeOf(body, attributes) };
}

/**
 * A CloudEvent's data (structured mode) as its consumer reads it back: an object, bytes as
 * `data_base64`, or the text itself. The consumer takes `data` as it is and runs no decoder function,
 * so a class read by one is refused rather than sent without its fields.
 */
function cloudEventData(
  event: object,
  eventClass: Type<unknown>,
  decoder: ResolvedBodyDecoder,
  target: EncodingTarget,
): Record<string, unknown> {
  if (decoder.name === 'json') {
    return { datacontenttype: 'application/json', data: instanceToPlain(event, target.transformOptions) };
  }
  if (decoder.name === 'base64') {
    return {
      datacontenttype: 'application/octet-stream',
      data_base64: rawBody(event, eventClass, decoder, undefined),
    };
  }
  if (decoder.name === 'function') {
    throw new SqsProducerError(
      `SqsProducer (${target.description}): ${eventClass.name} is read by a decoder function, which a ` +
        "CloudEvents queue does not run (its consumer takes the CloudEvent's data as it is); send it to a " +
        "queue without envelope: 'cloudevents', or give the class a JSON, text or bytes form.",
    );
  }
  const text = (event as Record<string, unknown>)[RAW_BODY_FIELD];
  if (typeof text !== 'string') throw rawFieldError(eventClass, 'a string', text);
  return { datacontenttype: 'text/plain', data: text };
}

/** Sets the type at a dot path of the body, refusing a body whose own value there says otherwise. */
function writeType(
  plain: Record<string, unknown>,
  field: string,
  type: string,
  eventClass: Type<unknown>,
  target: EncodingTarget,
): void {
  const path = parseKeyPath(field);
  if (typeof path === 'string') throw new SqsProducerError(`SqsProducer (${target.description}): ${path}`);
  const present = readKeyPath(plain, path);
  if (present !== undefined) {
    if (present !== type) {
      throw new SqsProducerError(
        `SqsProducer (${target.description}): the ${eventClass.name} has "${field}" ${JSON.stringify(present)}, ` +
          `but its class is the event type "${type}": the consumer would route it elsewhere.`,
      );
    }
    return;
  }
  let node = plain;
  for (const segment of path.slice(0, -1)) {
    if (node[segment] === undefined) node[segment] = {};
    if (node[segment] === null || typeof node[segment] !== 'object') {
      throw new SqsProducerError(
        `SqsProducer (${target.description}): cannot write the type at "${field}": "${segment}" is not an object.`,
      );
    }
    node = node[segment] as Record<string, unknown>;
  }
  node[path[path.length - 1]] = type;
}

/** The body of a text or bytes class: its `body` field, as its decoder reads it back. */
function rawBody(
  event: object,
  eventClass: Type<unknown>,
  decoder: ResolvedBodyDecoder,
  encoder: ((event: any) => string) | undefined,
): string {
  if (decoder.name === 'function') {
    if (encoder === undefined) {
      throw new SqsProducerError(
        `SqsProducer: ${eventClass.name} is read by a decoder function; give it the inverse as ` +
          `@SqsEvent('...', { decoder, encoder: (event) => text }) to send it.`,
      );
    }
    const text = encoder(event);
    if (typeof text !== 'string')
      throw new SqsProducerError(
        `SqsProducer: the encoder of ${eventClass.name} returned ${typeof text}, not text.`,
      );
    return text;
  }
  const value = (event as Record<string, unknown>)[RAW_BODY_FIELD];
  if (decoder.name === 'base64') {
    if (!(value instanceof Uint8Array)) throw rawFieldError(eventClass, 'a Buffer', value);
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  }
  if (typeof value !== 'string') throw rawFieldError(eventClass, 'a string', value);
  return decoder.name === 'base64-text' ? Buffer.from(value, 'utf8').toString('base64') : value;
}

function rawFieldError(eventClass: Type<unknown>, expected: string, value: unknown): SqsProducerError {
  return new SqsProducerError(
    `SqsProducer: ${eventClass.name} is sent as its "${RAW_BODY_FIELD}" field, which must be ${expected} (got ${value === null ? 'null' : typeof value}).`,
  );
}

function toAttributes(
  input: Record<string, SqsAttributeInput> | undefined,
): Record<string, OutgoingAttribute> {
  const attributes: Record<string, OutgoingAttribute> = {};
  for (const [name, value] of Object.entries(input ?? {})) {
    if (typeof value === 'string') attributes[name] = { DataType: 'String', StringValue: value };
    else if (typeof value === 'number') attributes[name] = { DataType: 'Number', StringValue: String(value) };
    else if (value instanceof Uint8Array) attributes[name] = { DataType: 'Binary', BinaryValue: value };
    else attributes[name] = value;
  }
  return attributes;
}

/** What SQS counts: the body, and each attribute's name, type and value. */
function sizeOf(body: string, attributes: Record<string, OutgoingAttribute>): number {
  let size = Buffer.byteLength(body, 'utf8');
  for (const [name, attribute] of Object.entries(attributes)) {
    size += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(attribute.DataType, 'utf8');
    if (attribute.StringValue !== undefined) size += Buffer.byteLength(attribute.StringValue, 'utf8');
    if (attribute.BinaryValue !== undefined) size += attribute.BinaryValue.byteLength;
  }
  return size;
}
