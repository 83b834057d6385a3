import type { Type } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';

/**
 * The event classes that carry no class-validator decorator at all. Such a class accepts any body:
 * class-transformer copies every field of the message onto it and class-validator finds nothing to
 * check, so a typo'd or hostile field reaches the handler. That is legal (some apps validate in the
 * handler, or trust the producer) but rarely meant, so the app says so once at bootstrap.
 */
export function unvalidatedEventClasses(eventClasses: Iterable<Type<unknown>>): Type<unknown>[] {
  const storage = getMetadataStorage();
  const found: Type<unknown>[] = [];
  for (const eventClass of new Set(eventClasses)) {
    // `always: true`, no groups: every rule of the class and its parents, whatever its options.
    if (storage.getTargetValidationMetadatas(eventClass, '', true, false).length === 0)
      found.push(eventClass);
  }
  return found;
}
