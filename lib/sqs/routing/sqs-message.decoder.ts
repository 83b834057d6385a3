import type { Type } from '@nestjs/common';
import type { ClassTransformOptions } from 'class-transformer';
import { validate, ValidationError, ValidatorOptions } from 'class-validator';
import { mapToEvent } from './plain-event-mapper';

/** An SQS body to an event instance: JSON, class-transformer, class-validator; each failure throws its reason. */

/** How bodies become events. */
export interface SqsValidationOptions {
  /** Run class-validator on the event (default `true`). */
  validate?: boolean;
  /** class-transformer options for `plainToInstance`. */
  transformOptions?: ClassTransformOptions;
  /** class-validator options (default `forbidUnknownValues: false`, so classes without decorators pass). */
  validatorOptions?: ValidatorOptions;
}

/** Parses the body; it must be a JSON object. */
export function parseBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'string')
    throw new Error(`the record has no body (got ${body === null ? 'null' : typeof body})`);
  if (body.length === 0) throw new Error('the body is empty');
  let value: unknown;
  try {
    value = JSON.parse(body.charCodeAt(0) === 0xfeff ? body.slice(1) : body); // past a byte order mark
  } catch (error) {
    throw new Error(`the body is not JSON (${(error as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(
      `the body is JSON ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}, not an object`,
    );
  }
  // JSON.parse makes `__proto__` and `constructor` own keys, which mapped onto an instance would skip
  // validation: such payloads are refused (the substring test keeps it free for all others).
  if (body.includes('"__proto__"') || body.includes('"constructor"')) checkPrototypeKeys(value);
  return value as Record<string, unknown>;
}

/**
 * Refuses an own `__proto__` or `constructor` key at any depth, for payloads not parsed here; searched
 * iteratively (payloads may be deep), the first one found named by its dot path.
 */
export function checkPrototypeKeys(root: object): void {
  const stack: Array<[unknown, string]> = [[root, '']];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    for (const key of Object.keys(value)) {
      const childPath = path ? `${path}.${key}` : key;
      if (key === '__proto__' || key === 'constructor') {
        throw new Error(
          `the body has the key "${childPath}", which could replace the event's prototype; rename the field`,
        );
      }
      stack.push([(value as Record<string, unknown>)[key], childPath]);
    }
  }
}

/** Maps `payload` onto `eventClass` and validates it. */
export async function toEvent(
  eventClass: Type<unknown>,
  payload: Record<string, unknown>,
  options: SqsValidationOptions,
): Promise<object> {
  const event = mapToEvent(eventClass, payload, options.transformOptions);
  if (options.validate === false) return event;
  const errors = await validate(event, validatorOptionsOf(options));
  if (errors.length > 0)
    throw new Error(`${eventClass.name} fails validation: ${describeValidationErrors(errors)}`);
  return event;
}

/** class-validator's options of each queue's settings, built once rather than per record. */
const validatorOptions = new WeakMap<SqsValidationOptions, ValidatorOptions>();

function validatorOptionsOf(options: SqsValidationOptions): ValidatorOptions {
  let resolved = validatorOptions.get(options);
  if (resolved === undefined) {
    resolved = { forbidUnknownValues: false, ...options.validatorOptions };
    validatorOptions.set(options, resolved);
  }
  return resolved;
}

/** class-validator's errors in one line, nested properties by their dot path. */
export function describeValidationErrors(errors: ValidationError[], parent = ''): string {
  const parts: string[] = [];
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    if (error.constraints)
      parts.push(...Object.values(error.constraints).map((text) => text.replace(error.property, path)));
    if (error.children?.length) parts.push(describeValidationErrors(error.children, path));
  }
  return parts.join('; ');
}
