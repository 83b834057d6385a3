import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { MAX_KEY_SEGMENT_BYTES } from './idempotency-key';
import { storeKeyPrefixOf } from './store-key';

/**
 * The bounds of store keys, checked at start-up: a name (`keyPrefix`, `service`, `scope`) is part of
 * every store key of its handlers, so one the backend cannot take would fail every record on its
 * key, each one ending in the dead-letter queue, with the app started and healthy-looking. So:
 *
 * - a name holds no control character (NUL cannot be stored in a Postgres `text` at all; the others
 *   make keys that logs and consoles mangle); keys themselves are hashed when they hold one;
 * - the longest store key a handler can build (its escaped prefix, service and scope, and a key of
 *   up to {@link MAX_KEY_SEGMENT_BYTES} bytes) fits the store's `maxKeyBytes`, when it declares one
 *   (a Postgres index row, a DynamoDB partition key).
 */

// C0 controls (NUL included), DEL and C1 controls.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/** The names a store key is built from, as the options give them. */
export interface KeyNames {
  readonly keyPrefix: string;
  readonly service: string | undefined;
  /** `undefined` for the module-level check (before any handler's scope is known). */
  readonly scope?: string;
}

/** Refuses a name holding a control character, naming the option and the character. */
export function checkKeyName(value: string | undefined, option: string, where: string): void {
  if (value === undefined) return;
  const found = CONTROL_CHARACTER.exec(value);
  if (found === null) return;
  const code = `U+${found[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  throw new IdempotencyConfigurationError(
    `${where}: ${option} holds the control character ${code}${code === 'U+0000' ? ' (NUL)' : ''} at index ` +
      `${found.index}; it is part of every store key (a Postgres text column cannot hold NUL at all). Use a name of ` +
      'printable characters.',
  );
}

/**
 * Refuses names whose longest store key exceeds the store's `maxKeyBytes`, saying the limit, how
 * long each name is and which one to shorten.
 */
export function checkLongestKey(
  names: KeyNames,
  store: { readonly name: string; readonly maxKeyBytes?: number },
  where: string,
): void {
  if (store.maxKeyBytes === undefined) return;
  const prefix = storeKeyPrefixOf(names.keyPrefix, names.service, names.scope ?? '');
  const longest = Buffer.byteLength(prefix, 'utf8') + MAX_KEY_SEGMENT_BYTES;
  if (longest <= store.maxKeyBytes) return;
  const sizes: Array<[string, number]> = [['keyPrefix', Buffer.byteLength(names.keyPrefix, 'utf8')]];
  if (names.service !== undefined) sizes.push(['service', Buffer.byteLength(names.service, 'utf8')]);
  if (names.scope !== undefined) sizes.push(['scope', Buffer.byteLength(names.scope, 'utf8')]);
  const [longestName] = [...sizes].sort((a, b) => b[1] - a[1])[0];
  throw new IdempotencyConfigurationError(
    `${where}: the longest store key this builds is ${longest} bytes (${sizes
      .map(([name, bytes]) => `${name} ${bytes}`)
      .join(
        ', ',
      )}, escaped, and a key of up to ${MAX_KEY_SEGMENT_BYTES}), and the store ${store.name} takes keys ` +
      `of at most ${store.maxKeyBytes} bytes: every record would fail on its key. Shorten ${longestName} by at ` +
      `least ${longest - store.maxKeyBytes} bytes.`,
  );
}
