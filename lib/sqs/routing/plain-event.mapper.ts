import type { Type } from '@nestjs/common';
import {
  ClassTransformOptions,
  Exclude,
  Expose,
  plainToInstance,
  Transform,
  Type as TypeOf,
} from 'class-transformer';

/**
 * `plainToInstance(eventClass, payload)` done directly, by class-transformer's own rules, for a class
 * without class-transformer decorators and a queue without `transformOptions` (the common case, and
 * its largest per-record cost otherwise); anything else takes `plainToInstance`. The spec holds the
 * two to the same results.
 */

/** The part of class-transformer's `MetadataStorage` read here: one map per decorator kind. */
interface DecoratorMaps {
  readonly _typeMetadatas: ReadonlyMap<unknown, unknown>;
  readonly _transformMetadatas: ReadonlyMap<unknown, unknown>;
  readonly _exposeMetadatas: ReadonlyMap<unknown, unknown>;
  readonly _excludeMetadatas: ReadonlyMap<unknown, unknown>;
}

/** Each map, and a decorator of the kind it holds (to check the map is where that decorator writes). */
const PROBES: ReadonlyArray<readonly [keyof DecoratorMaps, PropertyDecorator]> = [
  ['_typeMetadatas', TypeOf(() => String)],
  ['_transformMetadatas', Transform(({ value }) => value)],
  ['_exposeMetadatas', Expose()],
  ['_excludeMetadatas', Exclude()],
];

/** class-transformer's metadata storage module, held in a variable so bundlers leave it out. */
const STORAGE_MODULE = 'class-transformer/cjs/storage.js';

/** `undefined` until loaded; `null` when unusable (every class then takes class-transformer). */
let decoratorMaps: DecoratorMaps | null | undefined;
let loading: Promise<void> | undefined;
/** Per event class: whether the direct mapping applies (no decorator on it or an ancestor). */
const mappable = new WeakMap<Function, boolean>();

/** Returned by `copyJson` for a value JSON cannot hold: the payload goes to class-transformer. */
const NOT_JSON = Symbol('not JSON');

/** Maps `payload` onto `eventClass` as `plainToInstance(eventClass, payload, transformOptions)` does. */
export function mapToEvent(
  eventClass: Type<unknown>,
  payload: Record<string, unknown>,
  transformOptions: ClassTransformOptions | undefined,
): object {
  if (transformOptions === undefined && isMappable(eventClass)) {
    const event = mapJsonObject(eventClass, payload);
    if (event !== NOT_JSON) return event;
  }
  return plainToInstance(eventClass, payload, transformOptions) as object;
}

/** Loads what the direct mapping needs, once; resolves whether it is usable. */
export async function loadPlainEventMapper(): Promise<boolean> {
  await (loading ??= loadDecoratorMaps());
  return decoratorMaps != null;
}

function isMappable(eventClass: Type<unknown>): boolean {
  if (decoratorMaps == null) {
    if (decoratorMaps === undefined) void loadPlainEventMapper();
    return false;
  }
  let answer = mappable.get(eventClass);
  if (answer === undefined) {
    answer = !hasDecorators(decoratorMaps, eventClass);
    mappable.set(eventClass, answer);
  }
  return answer;
}

/** What the key-path check reads of a `@Type()`: its class, or its discriminator's subtypes. */
interface TypeMetadataLike {
  readonly typeFunction?: () => unknown;
  readonly options?: {
    readonly discriminator?: { readonly subTypes?: ReadonlyArray<{ readonly value: unknown }> };
  };
}

/**
 * The classes class-transformer builds `property` of `target`'s instances as: its `@Type()` class (on the
 * class or an ancestor), or every subtype of its discriminator; `undefined` without one, or before
 * `loadPlainEventMapper()` found the storage.
 */
export function classesOfProperty(target: Function, property: string): unknown[] | undefined {
  for (let type: unknown = target; typeof type === 'function'; type = Object.getPrototypeOf(type)) {
    const found = (decoratorMaps?._typeMetadatas.get(type) as Map<string, TypeMetadataLike> | undefined)?.get(
      property,
    );
    if (found === undefined) continue;
    const subTypes = found.options?.discriminator?.subTypes;
    if (subTypes !== undefined && subTypes.length > 0) return subTypes.map((subType) => subType.value);
    try {
      return [found.typeFunction?.()]; // a function of the value being built cannot be read here
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Whether class-transformer holds anything for `eventClass` or an ancestor (as it walks them). */
function hasDecorators(maps: DecoratorMaps, eventClass: Function): boolean {
  for (
    let target: unknown = eventClass;
    typeof target === 'function';
    target = Object.getPrototypeOf(target)
  ) {
    if (PROBES.some(([map]) => maps[map].has(target))) return true;
    if (target === Function.prototype) break;
  }
  return false;
}

async function loadDecoratorMaps(): Promise<void> {
  try {
    const storage = (await import(STORAGE_MODULE)) as { defaultMetadataStorage?: unknown };
    decoratorMaps = checkedDecoratorMaps(storage.defaultMetadataStorage);
  } catch {
    decoratorMaps = null;
  }
}

/** The storage's maps, if the decorators `plainToInstance` uses write there (each is tried on a class of its own). */
export function checkedDecoratorMaps(storage: unknown): DecoratorMaps | null {
  const maps = storage as Partial<DecoratorMaps> | undefined;
  for (const [map, decorator] of PROBES) {
    class Probe {}
    decorator(Probe.prototype, 'probe');
    if (!(maps?.[map] instanceof Map) || !maps[map].has(Probe)) return null;
  }
  return maps as DecoratorMaps;
}

/** `new eventClass()` with the payload's keys, or `NOT_JSON` (before constructing anything). */
function mapJsonObject(
  eventClass: Type<unknown>,
  payload: Record<string, unknown>,
): object | typeof NOT_JSON {
  const keys = Object.keys(payload);
  const values = new Array<unknown>(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const value = copyJson(payload[keys[i]]);
    if (value === NOT_JSON) return NOT_JSON;
    values[i] = value;
  }
  const event = new eventClass() as Record<string, unknown>;
  const prototype = (event.constructor as Function | undefined)?.prototype as object | undefined;
  for (let i = 0; i < keys.length; i++) {
    if (assignable(event, prototype, keys[i])) event[keys[i]] = values[i];
  }
  return event;
}

/** class-transformer's rule for a key of the object it builds (`target`, of `prototype`). */
function assignable(target: Record<string, unknown>, prototype: object | undefined, key: string): boolean {
  if (key === '__proto__' || key === 'constructor') return false;
  if (prototype !== undefined && prototype !== null) {
    const descriptor = Object.getOwnPropertyDescriptor(prototype, key);
    if ((descriptor !== undefined && descriptor.set === undefined) || target[key] instanceof Function) {
      return false;
    }
  }
  return true;
}

/** A copy of a JSON value, as class-transformer copies an untyped one; `NOT_JSON` for anything else. */
function copyJson(value: unknown): unknown {
  if (value === null) return null;
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return value;
    case 'object':
      break;
    default:
      return NOT_JSON;
  }
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype === Array.prototype) {
    const array = value as unknown[];
    const copy: unknown[] = [];
    for (let i = 0; i < array.length; i++) {
      if (!(i in array)) return NOT_JSON;
      const element = copyJson(array[i]);
      if (element === NOT_JSON) return NOT_JSON;
      copy.push(element);
    }
    return copy;
  }
  if (prototype !== Object.prototype) return NOT_JSON;
  const source = value as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    const element = copyJson(source[key]);
    if (element === NOT_JSON) return NOT_JSON;
    if (assignable(copy, Object.prototype, key)) copy[key] = element;
  }
  return copy;
}
