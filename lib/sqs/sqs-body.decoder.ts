import type { SqsContext } from './sqs-context';
import { describeValue } from '../common/known-options';
import { SqsConfigurationError } from '../common/sqs-idempotency.error';

/**
 * How message text (the body, or an SNS `Message`) becomes the payload: `'json'` (default), `'text'`,
 * `'base64'` (bytes), `'base64-text'`, or a function (a throw makes the message invalid). A value
 * that is no object reaches the class as `{ body: value }`.
 */
export type SqsBodyDecoder = 'json' | 'text' | 'base64' | 'base64-text' | SqsBodyDecoderFunction;

/** A decoder of your own: the message text in, the payload (or `{ body }` material) out. */
export type SqsBodyDecoderFunction = (text: string, context: SqsContext) => unknown;

/** The field of a raw payload: the event of a `'text'` or `'base64'` message is `{ body }`. */
export const RAW_BODY_FIELD = 'body';

/** A decoder resolved once at bootstrap; the per-message path only calls it. */
export interface ResolvedBodyDecoder {
  /** `'json'`, `'text'`, ..., or `'function'`, for errors and the producer. */
  readonly name: Exclude<SqsBodyDecoder, SqsBodyDecoderFunction> | 'function';
  /** The payload of a text; throws (or rejects) with the reason when the text cannot be read. */
  decode(text: unknown, context: SqsContext): Record<string, unknown> | Promise<Record<string, unknown>>;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const BUILT_IN: Record<Exclude<SqsBodyDecoder, SqsBodyDecoderFunction>, ResolvedBodyDecoder> = {
  json: { name: 'json', decode: (text) => parseBody(text) },
  text: { name: 'text', decode: (text) => ({ [RAW_BODY_FIELD]: requireText(text) }) },
  base64: { name: 'base64', decode: (text) => ({ [RAW_BODY_FIELD]: fromBase64(text) }) },
  'base64-text': {
    name: 'base64-text',
    decode: (text) => ({ [RAW_BODY_FIELD]: fromBase64(text).toString('utf8') }),
  },
};

/** The JSON decoder, the default of every queue. */
export const JSON_BODY_DECODER = BUILT_IN.json;

/** Resolves a decoder option (`unset` when there is none); throws a sentence naming `where` when it is not one. */
export function resolveBodyDecoder(
  decoder: unknown,
  where: string,
  unset = JSON_BODY_DECODER,
): ResolvedBodyDecoder {
  if (decoder === undefined) return unset;
  if (typeof decoder === 'function') {
    const decode = decoder as SqsBodyDecoderFunction;
    return {
      name: 'function',
      decode: (text, context) => {
        const value = decode(requireText(text), context);
        return isThenable(value) ? Promise.resolve(value).then(checkedPayload) : checkedPayload(value);
      },
    };
  }
  if (typeof decoder !== 'string' || !Object.prototype.hasOwnProperty.call(BUILT_IN, decoder)) {
    throw new SqsConfigurationError(
      `${where}: decoder must be 'json', 'text', 'base64', 'base64-text' or a function (text, ctx) => payload, ` +
        `got ${describeValue(decoder)}.`,
    );
  }
  return BUILT_IN[decoder as keyof typeof BUILT_IN];
}

/** A value an envelope parsed (already refused prototype keys): an object as it is, else `{ body: value }`. */
export function toPayload(value: unknown): Record<string, unknown> {
  return isObject(value) ? value : { [RAW_BODY_FIELD]: value };
}

/** A decoder function's result as a payload: as `toPayload`, but checked, since its code is not ours. */
function checkedPayload(value: unknown): Record<string, unknown> {
  if (isObject(value)) checkPrototypeKeys(value);
  return toPayload(value);
}

function requireText(text: unknown): string {
  if (typeof text !== 'string') {
    throw new Error(`the record has no body (got ${text === null ? 'null' : typeof text})`);
  }
  return text;
}

function fromBase64(text: unknown): Buffer {
  const bytes = base64Bytes(requireText(text).replace(/\s+/g, ''));
  if (bytes === undefined) {
    throw new Error('the body is not base64 (the queue or its event class reads it with a base64 decoder)');
  }
  return bytes;
}

/** The bytes of a base64 text, or `undefined` when it is not base64. */
export function base64Bytes(text: string): Buffer | undefined {
  return text.length % 4 === 0 && BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/** A promise, or anything awaiting would treat as one (a `then` method). */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** Parses the body; it must be a JSON object. */
export function parseBody(text: unknown): Record<string, unknown> {
  const body = requireText(text);
  if (body.length === 0) throw new Error('the body is empty');
  let value: unknown;
  try {
    value = JSON.parse(body.charCodeAt(0) === 0xfeff ? body.slice(1) : body); // past a byte order mark
  } catch (error) {
    throw new Error(`the body is not JSON (${(error as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(
      `the body is JSON ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}, not an object`,
    );
  }
  // JSON.parse makes `__proto__` and `constructor` own keys, which mapped onto an instance would skip
  // validation: such payloads are refused (the substring test keeps it free for all others). A key can
  // be spelled with \u escapes (`"\u005f_proto__"`), so a body with one is searched too.
  if (body.includes('"__proto__"') || body.includes('"constructor"') || body.includes('\\u')) {
    checkPrototypeKeys(value);
  }
  return value as Record<string, unknown>;
}

/**
 * Refuses an own `__proto__` or `constructor` key at any depth, for payloads not parsed here; searched
 * iteratively (payloads may be deep), the first one found named by its dot path.
 */
export function checkPrototypeKeys(root: object): void {
  const stack: Array<[unknown, string]> = [[root, '']];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    for (const key of Object.keys(value)) {
      const childPath = path ? `${path}.${key}` : key;
      if (key === '__proto__' || key === 'constructor') {
        throw new Error(
          `the body has the key "${childPath}", which could replace the event's prototype; rename the field`,
        );
      }
      stack.push([(value as Record<string, unknown>)[key], childPath]);
    }
  }
}

/** A JSON object (not null, an array or bytes). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !Buffer.isBuffer(value);
}
