import { ValidationTypes } from 'class-validator';
import { classesOfProperty } from './plain-event.mapper';
import { ValidationRule, validationRulesOf as rulesOf } from './sqs-event.validator';
import type { ResolvedQueue } from './sqs-queue.resolver';

/**
 * What start-up can tell of an `@Idempotent()` handler's key path from its event class and the queues it
 * takes. Only a path no message can carry stops the app: validation's whitelist strips every field the
 * class does not declare. Where it cannot tell (a field the class does not validate, which the payload may
 * still carry; a subtype that lacks it) it warns; a class that validates nothing is not judged (the app
 * warns about that class apart). On a queue whose envelope names an id, that id is the default key.
 */

/** Types whose instances the check cannot look inside. */
const OPAQUE_TYPES = new Set<unknown>([Object, String, Number, Boolean, Date, Map, Set, Function]);
const ARRAY_INDEX = /^(0|[1-9]\d*)$/;

/** Why events of a class may lack a path; `stripped`: validation's whitelist strips it, from every one when `absent`. */
interface KeyPathFinding {
  readonly reason: string;
  readonly stripped: boolean;
  readonly absent: boolean;
}

/** A handler's key path, as its idempotency policy reads it. */
export interface HandlerKeyPath {
  readonly handlerName: string;
  readonly segments: readonly string[];
  /** `false`: the default `id`, for which an envelope's id stands in. */
  readonly chosen: boolean;
  readonly requireKey: boolean;
}

/**
 * Judges `keyPath` on events of `eventClass` from each of `queues`: the error to stop the app with, or a
 * warning, or `undefined` when every message can carry it.
 */
export function judgeKeyPath(
  eventClass: Function,
  keyPath: HandlerKeyPath,
  queues: readonly ResolvedQueue[],
): { error?: string; warning?: string } | undefined {
  let finding: KeyPathFinding | undefined;
  let raw: ResolvedQueue | undefined;
  for (const queue of queues) {
    if (!keyPath.chosen && queue.decoding.namesKey) continue;
    raw ??= queue;
    const { validate, validatorOptions } = queue.options.validation;
    const found = findingOf(
      eventClass,
      keyPath.segments,
      validate !== false && validatorOptions?.whitelist === true,
    );
    if (found !== undefined && !finding?.absent) finding = found;
  }
  if (finding === undefined) return undefined;
  const path = keyPath.segments.join('.');
  const where = `@Idempotent() on ${keyPath.handlerName}`;
  if (finding.absent && keyPath.requireKey) {
    return {
      error:
        `${where}: the key path "${path}" cannot exist on its event: ${finding.reason}, and validation's ` +
        'whitelist strips what it does not declare. Every record would fail for want of a key. Fix the keyPath, ' +
        'or declare the field on the event class with a validation rule (e.g. @IsString()).',
    };
  }
  const reads = `${where} reads its key from "${path}"${keyPath.chosen ? '' : ' (the default)'}, and ${finding.reason}`;
  const without = keyPath.requireKey ? 'fails for want of a key' : 'runs without dedup (requireKey: false)';
  if (!keyPath.chosen) {
    const queue = raw!.name === '*' ? 'its queue' : `queue "${raw!.name}"`; // '*': the queues SqsModule does not list
    return {
      warning:
        `${reads}: ${queue} opens no envelope that names an id (EventBridge, CloudEvents, S3), so a message ` +
        `without one ${without}. Set keyPath (@Idempotent('orderId')) or key, or declare the field.`,
    };
  }
  const why = finding.stripped
    ? `validation's whitelist strips it from ${finding.absent ? 'every event' : 'those events'}`
    : "without validation's whitelist it is on the event as the message carries it, unchecked";
  return {
    warning:
      `${reads}: ${why}, and a message without it ${without}. If "${path}" is a typo, fix the keyPath; else ` +
      'declare the field on the event class with a validation rule (e.g. @IsString()), so that a message ' +
      'without it is refused as invalid.',
  };
}

/**
 * Follows `path` through the classes its values are built as (declared types, class-transformer's `@Type()`
 * and its discriminator's subtypes, array elements by index); `whitelist`: validation strips undeclared fields
 * at this depth (at a nested one only through `@ValidateNested()`, into a class `@Type()` names).
 */
function findingOf(
  eventClass: Function,
  path: readonly string[],
  whitelist: boolean,
): KeyPathFinding | undefined {
  let classes = [eventClass];
  let strips = whitelist;
  for (let index = 0; index < path.length; index++) {
    const segment = path[index];
    // A class that validates nothing takes the payload as it comes, unless the whitelist strips it bare.
    const judged = strips ? classes : classes.filter((type) => rulesOf(type).length > 0);
    if (judged.length === 0) return undefined;
    const lacking = judged.find((type) => !rulesOf(type).some((rule) => rule.propertyName === segment));
    if (lacking !== undefined) {
      const declared = [...new Set(rulesOf(lacking).map((rule) => rule.propertyName))];
      const of = index === 0 ? '' : ` (the type of "${path.slice(0, index).join('.')}")`;
      return {
        reason: `${lacking.name}${of} declares no property "${segment}"; it declares ${declared.join(', ') || 'nothing'}`,
        stripped: strips,
        absent:
          strips && judged.every((type) => !rulesOf(type).some((rule) => rule.propertyName === segment)),
      };
    }
    if (index === path.length - 1) return undefined;
    const next = path[index + 1];
    const built = classes.map((type) => classesOfProperty(type, segment));
    const typed = built.every((types) => types !== undefined);
    const designed = classes.map(
      (type) => Reflect.getMetadata('design:type', type.prototype, segment) as unknown,
    );
    // An array's elements are `@Type()`'s class, read by index; any other segment of an array is left alone.
    const indexed = typed && ARRAY_INDEX.test(next);
    if (designed.includes(Array) && !indexed) return undefined;
    const nested = typed ? built.flat() : designed;
    if (!nested.every((type): type is Function => typeof type === 'function' && !OPAQUE_TYPES.has(type))) {
      return undefined;
    }
    // class-validator strips a nested object's fields only where it validates it, by the class it was built as.
    strips &&= typed && classes.every((type) => rulesOf(type).some((rule) => isNestedRule(rule, segment)));
    if (indexed) index++;
    classes = nested;
  }
  return undefined;
}

function isNestedRule(rule: ValidationRule, property: string): boolean {
  return rule.propertyName === property && rule.type === ValidationTypes.NESTED_VALIDATION;
}
