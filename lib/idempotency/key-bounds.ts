import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { MAX_KEY_SEGMENT_BYTES } from './idempotency-key';
import { storeKeyPrefixOf } from './store-key';

// The bounds of store keys, checked at start-up: `keyPrefix`, `service` and `scope` are part of every
// store key of their handlers, so one the backend cannot take would send every record to the
// dead-letter queue while the app looks healthy.

// C0 controls (NUL included), DEL and C1 controls.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Refuses a name holding a control character: NUL cannot be stored in a Postgres `text` at all, the
 * others make keys that logs and consoles mangle (a key holding one is hashed instead).
 */
export function checkKeyName(value: string | undefined, option: string, where: string): void {
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
