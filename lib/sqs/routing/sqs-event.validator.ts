import type { Type } from '@nestjs/common';
import { getMetadataStorage, validate, ValidationError, ValidatorOptions } from 'class-validator';
import type { SqsValidationOptions } from '../sqs-module-options.interface';
import { mapToEvent } from './plain-event.mapper';

/**
 * A queue's payload-to-event step, its class-validator options resolved once: the payload mapped onto
 * the event class, then validated; each failure throws its reason.
 */
export function eventValidator(
  options: SqsValidationOptions,
): (eventClass: Type<unknown>, payload: Record<string, unknown>) => Promise<object> {
  const validatorOptions: ValidatorOptions = { forbidUnknownValues: false, ...options.validatorOptions };
  return async (eventClass, payload) => {
    const event = mapToEvent(eventClass, payload, options.transformOptions);
    if (options.validate === false) return event;
    const errors = await validate(event, validatorOptions);
    if (errors.length > 0)
      throw new Error(`${eventClass.name} fails validation: ${describeValidationErrors(errors)}`);
    return event;
  };
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

/** What the start-up checks read of a class-validator rule. */
export type ValidationRule = { readonly propertyName: string; readonly type: string };

/** The class-validator rules of a class and its ancestors, whatever their groups. */
export function validationRulesOf(type: Function): readonly ValidationRule[] {
  return getMetadataStorage().getTargetValidationMetadatas(type, '', true, false);
}

/** The properties a class (with its ancestors) declares a validation rule for; none: it is not validated. */
export function declaredProperties(eventClass: Function): Set<string> {
  return new Set(validationRulesOf(eventClass).map((rule) => rule.propertyName));
}
