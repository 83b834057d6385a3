import { getMetadataStorage } from 'class-validator';

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
 * Why `path` cannot exist on instances of `eventClass`, judged at start-up from its class-validator
 * rules (a key read from a field the class never declares is usually a typo, and would fail every
 * record); `undefined` when it can, or when the class declares nothing. Nested segments follow a
 * declared property's class.
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

/** The properties a class (with its ancestors) declares a validation rule for; none: it is not validated. */
export function declaredProperties(eventClass: Function): Set<string> {
  // `always: true`, no groups: every rule of the class and its parents, whatever its options.
  const rules = getMetadataStorage().getTargetValidationMetadatas(eventClass, '', true, false);
  return new Set(rules.map((rule) => rule.propertyName));
}
