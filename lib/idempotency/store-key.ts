/**
 * Store keys: `<prefix>:<service>:<scope>:<key>`, each segment escaped so that no two tuples share a
 * store key (one handler would skip an event it never saw): `%` and `:` percent-encoded; `{` `}` too
 * outside the prefix (a producer must not pin claims to one Redis Cluster slot); a lone surrogate as
 * `%uXXXX` (UTF-8 would merge them).
 */

/** The separator between segments. */
export const STORE_KEY_SEPARATOR = ':';

// Any character that may need escaping: a candidate for the slow path. Surrogates of a valid pair
// match too (and are kept there); a key with none of these is its own escape.
const MAY_NEED_ESCAPE = /[%:{}\ud800-\udfff]/;
const PREFIX_MAY_NEED_ESCAPE = /[%:\ud800-\udfff]/;

/** Escapes one service, scope or key segment (`%`, `:`, `{`, `}` and lone surrogates). */
export function escapeKeySegment(segment: string): string {
  return MAY_NEED_ESCAPE.test(segment) ? escapeSlowly(segment, true) : segment;
}

/** Escapes the prefix segment: as {@link escapeKeySegment}, but braces stay (a hash tag on purpose). */
export function escapePrefixSegment(segment: string): string {
  return PREFIX_MAY_NEED_ESCAPE.test(segment) ? escapeSlowly(segment, false) : segment;
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

function escapeSlowly(segment: string, braces: boolean): string {
  let escaped = '';
  for (let i = 0; i < segment.length; i++) {
    const code = segment.charCodeAt(i);
    if (code === 0x25) escaped += '%25';
    else if (code === 0x3a) escaped += '%3A';
    else if (braces && code === 0x7b) escaped += '%7B';
    else if (braces && code === 0x7d) escaped += '%7D';
    else if (code >= 0xd800 && code <= 0xdbff && isLowSurrogate(segment.charCodeAt(i + 1))) {
      escaped += segment[i] + segment[i + 1];
      i++;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      escaped += '%u' + code.toString(16).toUpperCase();
    } else escaped += segment[i];
  }
  return escaped;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
