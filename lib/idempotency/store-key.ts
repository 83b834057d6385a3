import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { MAX_KEY_SEGMENT_BYTES } from './idempotency-key';

/**
 * Store keys: `<prefix>:<service>:<scope>:<key>`, each segment escaped so that no two tuples share a
 * store key (one handler would skip an event it never saw): `%` and `:` percent-encoded; `{` `}` too
 * outside the prefix (a producer must not pin claims to one Redis Cluster slot); a lone surrogate as
 * `%uXXXX` (UTF-8 would merge them). Their bounds are checked at start-up: `keyPrefix`, `service` and
 * `scope` are part of every store key of their handlers, so one the backend cannot take would send
 * every record to the dead-letter queue while the app looks healthy.
 */

/** The separator between segments. */
export const STORE_KEY_SEPARATOR = ':';

// Any character that may need escaping: a candidate for the slow path (per message, so keys test
// first). Surrogates of a valid pair match too (and are kept there).
const MAY_NEED_ESCAPE = /[%:{}\ud800-\udfff]/;
// What the slow path escapes: the separators (braces outside the prefix) and the lone surrogates.
const SEGMENT_ESCAPES = /[%:{}]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const PREFIX_ESCAPES = /[%:]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const ESCAPED: Readonly<Record<string, string>> = { '%': '%25', ':': '%3A', '{': '%7B', '}': '%7D' };

/** Escapes one service, scope or key segment (`%`, `:`, `{`, `}` and lone surrogates). */
export function escapeKeySegment(segment: string): string {
  return MAY_NEED_ESCAPE.test(segment) ? escapeSlowly(segment, SEGMENT_ESCAPES) : segment;
}

/** Escapes the prefix segment (at bootstrap): as {@link escapeKeySegment}, but braces stay (a hash tag). */
export function escapePrefixSegment(segment: string): string {
  return escapeSlowly(segment, PREFIX_ESCAPES);
}

/** `<prefix>:<service>:<scope>:` (or `<prefix>:<scope>:` without a service). */
export function storeKeyPrefixOf(prefix: string, service: string | undefined, scope: string): string {
  const head = escapePrefixSegment(prefix) + STORE_KEY_SEPARATOR;
  const middle = service === undefined ? '' : escapeKeySegment(service) + STORE_KEY_SEPARATOR;
  return head + middle + escapeKeySegment(scope) + STORE_KEY_SEPARATOR;
}

/** The whole store key of `key` under a handler's {@link storeKeyPrefixOf}. */
export function storeKeyOf(storeKeyPrefix: string, key: string): string {
  return storeKeyPrefix + escapeKeySegment(key);
}

function escapeSlowly(segment: string, escapes: RegExp): string {
  return segment.replace(
    escapes,
    (found) => ESCAPED[found] ?? `%u${found.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

// C0 controls (NUL included), DEL and C1 controls.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Refuses an empty name, or one holding a control character: NUL cannot be stored in a Postgres
 * `text` at all, the others make keys that logs and consoles mangle (a key holding one is hashed).
 */
export function checkKeyName(value: string | undefined, option: string, where: string): void {
  if (value === '')
    throw new IdempotencyConfigurationError(`${where}: ${option} must be a non-empty string.`);
  const found = value === undefined ? null : CONTROL_CHARACTER.exec(value);
  if (found === null) return;
  const code = `U+${found[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  throw new IdempotencyConfigurationError(
    `${where}: ${option} holds the control character ${code}${code === 'U+0000' ? ' (NUL)' : ''} at index ` +
      `${found.index}; it is part of every store key (a Postgres text column cannot hold NUL at all). Use a name of ` +
      'printable characters.',
  );
}

/**
 * Refuses names whose longest store key (a key of up to {@link MAX_KEY_SEGMENT_BYTES} bytes under
 * them) exceeds the store's `maxKeyBytes`, saying how long each name is and which one to shorten.
 * `scope` is absent in the module-level check, before any handler's scope is known.
 */
export function checkLongestKey(
  names: { readonly keyPrefix: string; readonly service: string | undefined; readonly scope?: string },
  store: { readonly name: string; readonly maxKeyBytes?: number },
  where: string,
): void {
  if (store.maxKeyBytes === undefined) return;
  const prefix = storeKeyPrefixOf(names.keyPrefix, names.service, names.scope ?? '');
  const longest = Buffer.byteLength(prefix, 'utf8') + MAX_KEY_SEGMENT_BYTES;
  if (longest <= store.maxKeyBytes) return;
  const sizes = Object.entries(names)
    .filter(([, name]) => name !== undefined)
    .map(([option, name]) => [option, Buffer.byteLength(name as string, 'utf8')] as const);
  const [longestName] = [...sizes].sort((a, b) => b[1] - a[1])[0];
  throw new IdempotencyConfigurationError(
    `${where}: the longest store key this builds is ${longest} bytes (` +
      `${sizes.map(([option, bytes]) => `${option} ${bytes}`).join(', ')}, escaped, and a key of up to ` +
      `${MAX_KEY_SEGMENT_BYTES}), and the store ${store.name} takes keys of at most ${store.maxKeyBytes} bytes: ` +
      `every record would fail on its key. Shorten ${longestName} by at least ${longest - store.maxKeyBytes} bytes.`,
  );
}
