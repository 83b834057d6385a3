// The one reading of an options object, which every entry point runs at start-up. Options may come as
// a literal or as an instance of a settings class (values in fields, or in getters of its class), and
// Nest's module builder, like a spread, copies own keys only: so each entry point works on what this
// returns, a plain object of the names it knows. A name it does not know stops the app (a typo such as
// `kepPath` would otherwise run with the default, silently), naming the nearest known one; so does a
// value of a kind its option does not take. A range or a shape stays with the option's own check.
import { IdempotencyConfigurationError } from './sqs-idempotency.error';

/** A kind of value an option takes: a `typeof`, `'array'`, `'object'` (any other non-null object) or `'any'`. */
export type OptionKind = 'string' | 'number' | 'boolean' | 'function' | 'object' | 'array' | 'any';

/** A nested options object, read as its parent is: each name with what it takes. */
export interface NestedOptionShape {
  readonly [name: string]: OptionSpec;
}

/** What one option takes: kinds, or a nested options object (alone or beside kinds: `['boolean', { ... }]`). */
export type OptionSpec = OptionKind | NestedOptionShape | readonly (OptionKind | NestedOptionShape)[];

/** Every option of `T` with what it takes. */
export type OptionShape<T> = { readonly [K in keyof Required<T>]: OptionSpec };

/** The options every `forRootAsync()` takes (Nest's ConfigurableModuleBuilder). */
export const ASYNC_OPTION_SHAPE = {
  useFactory: 'function',
  useClass: 'function',
  useExisting: 'any',
  inject: 'array',
  imports: 'array',
  provideInjectionTokensFrom: 'array',
} as const;

/**
 * `options` as a plain object of the names `shape` lists (own fields, getters, or methods of a settings
 * class, which keep their instance), nested options objects read the same way; `undefined` reads as `{}`.
 * Throws a `Failure` (the entry point's configuration error) naming `where` and the option for anything
 * else, an unknown name, a value of a kind the option does not take, or a getter that throws. Names the
 * object does not expose are never read.
 */
export function readOptions<T extends object>(
  options: T | undefined,
  shape: OptionShape<T>,
  where: string,
  Failure: new (message: string) => Error = IdempotencyConfigurationError,
): T {
  if (options === undefined) return {} as T;
  if (kindOf(options) !== 'object') {
    throw new Failure(`${where}: expected an options object, got ${describeValue(options)}.`);
  }
  const known = Object.keys(shape);
  const getters = inheritedGetters(options);
  for (const name of [...Object.keys(options), ...getters]) {
    if (Object.hasOwn(shape, name)) continue;
    const of = options.constructor !== Object && options.constructor?.name;
    throw new Failure(
      `${where}: unknown option "${name}"${of ? ` (of ${of})` : ''}; did you mean ` +
        `"${nearestName(name, known)}"? Known options: ${known.join(', ')}.`,
    );
  }
  const read: Record<string, unknown> = {};
  for (const name of known) {
    // A name given as undefined stays (`url: process.env.X` unset is said apart from no url).
    if (!(name in options)) continue;
    let value: unknown;
    try {
      value = (options as Record<string, unknown>)[name];
    } catch (error) {
      throw new Failure(`${where}: reading ${name} threw: ${(error as Error)?.message ?? String(error)}`);
    }
    if (value === undefined) {
      read[name] = value;
      continue;
    }
    // A method of a settings class (`key(event) { return this... }`) keeps its instance, as a call on it would.
    const inherited = !Object.hasOwn(options, name) && !getters.includes(name);
    if (typeof value === 'function' && inherited && !value.prototype) value = value.bind(options);
    const specs = [shape[name as keyof T]].flat() as (OptionKind | NestedOptionShape)[];
    const nested = specs.find((spec): spec is NestedOptionShape => typeof spec === 'object');
    const kind = kindOf(value);
    if (nested && kind === 'object')
      read[name] = readOptions(value as object, nested, `${where}: ${name}`, Failure);
    else if (specs.includes('any') || specs.includes(kind!)) read[name] = value;
    else throw new Failure(`${where}: ${name} must be ${describeKinds(specs)}, got ${describeValue(value)}.`);
  }
  return read as T;
}

/** The getters of the classes `options` is an instance of (a settings class exposes its options so). */
function inheritedGetters(options: object): string[] {
  const names: string[] = [];
  for (let proto = Object.getPrototypeOf(options); proto && proto !== Object.prototype;) {
    for (const [name, { get }] of Object.entries(Object.getOwnPropertyDescriptors(proto)))
      if (get) names.push(name);
    proto = Object.getPrototypeOf(proto);
  }
  return names;
}

/** The known name closest to `name`, case aside (Levenshtein distance; the first of equals). */
export function nearestName(name: string, known: readonly string[]): string {
  const distances = known.map((candidate) => editDistance(name.toLowerCase(), candidate.toLowerCase()));
  return known[distances.indexOf(Math.min(...distances))];
}

/** The kind of a value, as `OptionKind`s name them; `null` and a `bigint` are of no kind (only `'any'` takes them). */
function kindOf(value: unknown): OptionKind | undefined {
  if (Array.isArray(value)) return 'array';
  if (value === null || typeof value === 'bigint' || typeof value === 'undefined') return undefined;
  return typeof value as OptionKind;
}

function describeKinds(specs: readonly (OptionKind | NestedOptionShape)[]): string {
  const phrases = specs
    .map((spec) => (typeof spec === 'object' ? 'object' : spec))
    .map((kind) => (kind === 'boolean' ? 'true or false' : `a${/^[ao]/.test(kind) ? 'n' : ''} ${kind}`));
  return phrases.length === 1
    ? phrases[0]
    : `${phrases.slice(0, -1).join(', ')} or ${phrases[phrases.length - 1]}`;
}

/** A value as an error shows it: `null`, `string "no"`, `number 42`, `an array`, `an object`. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`;
  if (typeof value === 'function')
    return value.prototype === undefined ? 'an arrow function' : `function ${value.name || '(anonymous)'}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

/** Insertions, deletions and substitutions from `a` to `b`, one row of the table at a time. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length];
}
