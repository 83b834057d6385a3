// The one check of an options object every entry point runs at start-up: no name it does not know (a
// typo such as `kepPath` would otherwise run with the default, silently) and each value of a kind its
// option accepts. What a value must be beyond its kind (a range, a shape) stays with the option's check.

/** A kind of value an option accepts: a `typeof`, or `'array'`, or `'object'` (any other non-null object). */
export type OptionKind = 'string' | 'number' | 'boolean' | 'function' | 'object' | 'array' | 'symbol' | 'any';

/** Every option an entry point takes, with the kinds of value each accepts (`undefined` always passes). */
export type OptionKinds<T> = { readonly [K in keyof Required<T>]: OptionKind | readonly OptionKind[] };

/** The options every `forRootAsync()` takes (Nest's ConfigurableModuleBuilder), checked like the rest. */
export const ASYNC_OPTION_KINDS = {
  useFactory: 'function',
  useClass: 'function',
  useExisting: 'any',
  inject: 'array',
  imports: 'array',
  provideInjectionTokensFrom: 'array',
} as const;

/**
 * Throws `error(message)` when `options` is not an object, holds a name `kinds` does not list, or a
 * value of a kind its option does not accept; `undefined` passes (no options). Runs at start-up only.
 */
export function checkOptions<T>(
  options: unknown,
  kinds: OptionKinds<T>,
  where: string,
  error: (message: string) => Error = (message) => new TypeError(message),
): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw error(`${where}: expected an options object, got ${describeValue(options)}.`);
  }
  const known = Object.keys(kinds);
  for (const name of Object.keys(options)) {
    if (!Object.prototype.hasOwnProperty.call(kinds, name)) {
      throw error(
        `${where}: unknown option "${name}"; did you mean "${nearestName(name, known)}"? ` +
          `Known options: ${known.join(', ')}.`,
      );
    }
    const value = (options as Record<string, unknown>)[name];
    if (value === undefined) continue;
    const accepted = kinds[name as keyof T] as OptionKind | readonly OptionKind[];
    const list: readonly OptionKind[] = typeof accepted === 'string' ? [accepted] : accepted;
    const kind = kindOf(value);
    if (!list.includes('any') && (kind === undefined || !list.includes(kind))) {
      throw error(`${where}: ${name} must be ${describeKinds(list)}, got ${describeValue(value)}.`);
    }
  }
}

/** The known name closest to `name` (case aside, by edits: insertions, deletions, substitutions, swaps). */
export function nearestName(name: string, known: readonly string[]): string {
  let best = known[0];
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/** The kind of a value, as `OptionKind`s name them; `null` and a `bigint` are of no kind (only `'any'` takes them). */
function kindOf(value: unknown): OptionKind | undefined {
  if (Array.isArray(value)) return 'array';
  if (value === null || typeof value === 'bigint' || typeof value === 'undefined') return undefined;
  return typeof value as OptionKind;
}

function describeKinds(kinds: readonly OptionKind[]): string {
  const phrases = kinds.map((kind) =>
    kind === 'boolean' ? 'true or false' : `a${/^[ao]/.test(kind) ? 'n' : ''} ${kind}`,
  );
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

/** Optimal string alignment distance (Damerau-Levenshtein without repeated edits of one substring). */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const columns = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: columns }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < columns; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[rows - 1][columns - 1];
}
