/**
 * Store keys: the one string under which a store keeps a claim, built from
 * (prefix, service, scope, key) as `<prefix>:<service>:<scope>:<key>` (`<prefix>:<scope>:<key>` when
 * the app has no service segment).
 *
 * The encoding must be injective: two distinct tuples never share a store key, or one handler would
 * skip, as a "duplicate", an event it never saw (scope `ev` with key `x:z` against scope `ev:x` with
 * key `z`; service `a` against a prefix ending in `:a`). So each segment is percent-escaped before
 * the join:
 *
 * - `%` → `%25` and `:` → `%3A`: the separator appears only between segments, so the number of
 *   segments and each segment can be read back;
 * - `{` → `%7B` and `}` → `%7D` in the service, scope and key: on Redis Cluster a key's first `{...}`
 *   picks its hash slot, and a producer must not be able to pin every claim to one node. The prefix
 *   keeps its braces: a `{tag}` there is the operator asking for a hash tag;
 * - a lone UTF-16 surrogate → `%uXXXX`: a store writes keys as UTF-8, where every lone surrogate
 *   becomes U+FFFD, so two distinct strings would reach the store as the same bytes.
 *
 * Everything else stays as it is, so keys stay readable (`idempotency:billing:order_created:evt-1`).
 * The prefix, service and scope of a handler are escaped once, at bootstrap; per message only the key
 * is, and a key with nothing to escape (the usual case) is used as it is.
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

/**
 * The part of a handler's store keys that does not depend on the message, separator included:
 * `<prefix>:<service>:<scope>:` (or `<prefix>:<scope>:` when `service` is `undefined`).
 */
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
