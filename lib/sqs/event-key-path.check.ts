import { getMetadataStorage } from 'class-validator';

/**
 * Whether a key path can exist on an event class, judged at start-up from what the class declares:
 * its class-validator rules (and any decorated property, which TypeScript records a type for). A
 * key read from a field the class never declares is a key nobody checks, and usually a typo or a
 * field of another event: `metadata.eventId` on a class without `metadata` fails every record for
 * want of a key. A class that declares nothing (no validation at all) could hold anything: it is not
 * judged. Nested segments are followed through a declared property whose type is a class that
 * declares its own (`@ValidateNested() @Type(() => Metadata) metadata!: Metadata`).
 */

/** Types whose instances the check cannot look inside. */
const OPAQUE_TYPES: ReadonlySet<unknown> = new Set([
  Object,
  String,
  Number,
  Boolean,
  Array,
  Date,
  Map,
  Set,
  Function,
]);

/**
 * Why `path` cannot exist on instances of `eventClass`, or `undefined` when it can (or nothing
 * tells either way).
 */
export function keyPathProblem(eventClass: Function, path: readonly string[]): string | undefined {
  let current = eventClass;
  for (let index = 0; index < path.length; index++) {
    const declared = declaredProperties(current);
    if (declared.size === 0) return undefined;
    const segment = path[index];
    if (!declared.has(segment)) {
      const where = index === 0 ? '' : ` (the type of "${path.slice(0, index).join('.')}")`;
      return `${current.name}${where} declares no property "${segment}"; it declares ${[...declared].join(', ')}`;
    }
    const type: unknown = Reflect.getMetadata('design:type', current.prototype, segment);
    if (typeof type !== 'function' || OPAQUE_TYPES.has(type)) return undefined;
    current = type;
  }
  return undefined;
}

/** The properties a class (with its ancestors) declares a validation rule for. */
function declaredProperties(eventClass: Function): Set<string> {
  // `always: true`, no groups: every rule of the class and its parents, whatever its options.
  const rules = getMetadataStorage().getTargetValidationMetadatas(eventClass, '', true, false);
  return new Set(rules.map((rule) => rule.propertyName));
}
