import type { Type } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';

/** Event classes with no class-validator decorator: legal, but rarely meant, so the app says so once. */
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
