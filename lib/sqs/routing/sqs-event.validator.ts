import type { Type } from '@nestjs/common';
import { validate, ValidationError, ValidatorOptions } from 'class-validator';
import type { SqsValidationOptions } from '../sqs-module-options.interface';
import { mapToEvent } from './plain-event.mapper';

/** A payload to an event instance: mapped onto its class, then class-validator; each failure throws its reason. */

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
