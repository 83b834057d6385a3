import { answerWithin } from '../common/answer-within';
import { toIdempotencyKey } from '../idempotency/idempotency-key';
import { IdempotencyPolicy, storeKeyFor } from '../idempotency/idempotency-policy';
import { inspectIn } from '../idempotency/store-calls';
import type { IdempotencyStore } from '../stores/idempotency-store.interface';
import type { CenterKeyState } from './idempotency-center.api';

/** Longest key the lookup accepts as typed (longer keys are claimed as their digest anyway). */
const MAX_LOOKUP_KEY_LENGTH = 10_000;

/** A lookup that cannot be answered as asked: `status` is the HTTP status the API answers with. */
export class CenterLookupError extends Error {
  override readonly name = 'CenterLookupError';
  readonly code: string = 'CENTER_LOOKUP';

  constructor(
    message: string,
    readonly status: 400 | 404,
  ) {
    super(message);
  }
}

/**
 * "What happened to key X?": the store entry each idempotent handler's claim would write, read by the
 * store's `inspect` (guarded: any failure is an `ERROR` state), from the key as logs show it, turned
 * into a store key by the claim's own functions.
 */
export async function lookUpKey(
  policies: readonly IdempotencyPolicy[],
  store: IdempotencyStore | undefined,
  eventType: string,
  typedKey: string,
  options: { showStoreKey: boolean; timeoutMs: number },
): Promise<CenterKeyState[]> {
  if (typeof eventType !== 'string' || eventType === '') {
    throw new CenterLookupError('Name the event type (eventType) whose key to look up.', 400);
  }
  if (typeof typedKey !== 'string' || typedKey === '' || typedKey.length > MAX_LOOKUP_KEY_LENGTH) {
    throw new CenterLookupError(
      `Give the key to look up (key), 1 to ${MAX_LOOKUP_KEY_LENGTH} characters.`,
      400,
    );
  }
  const handlers = policies.filter((policy) => policy.eventType === eventType);
  if (handlers.length === 0) {
    const known = idempotentTypes(policies);
    throw new CenterLookupError(
      `No @Idempotent() handler of event type ${JSON.stringify(eventType)} in this app, so no key of it is ` +
        `claimed here (idempotent types: ${known.map((type) => JSON.stringify(type)).join(', ') || 'none'}).`,
      404,
    );
  }
  const key = typedKey.startsWith('sha256:') ? typedKey : (toIdempotencyKey(typedKey) ?? typedKey);
  return Promise.all(
    handlers.map(async (policy): Promise<CenterKeyState> => {
      const storeKey = storeKeyFor(policy, key);
      const state: CenterKeyState = {
        handler: policy.handlerName,
        scope: policy.scope,
        ...(options.showStoreKey ? { storeKey } : {}),
        state: 'NOT_SUPPORTED',
      };
      if (store === undefined || typeof store.inspect !== 'function') return state;
      try {
        return {
          ...state,
          ...(await answerWithin(inspectIn(store, storeKey), options.timeoutMs, 'the store did not answer')),
        };
      } catch (error) {
        return { ...state, state: 'ERROR', error: error instanceof Error ? error.message : String(error) };
      }
    }),
  );
}

/** The event types with an `@Idempotent()` handler, sorted. */
export function idempotentTypes(policies: readonly IdempotencyPolicy[]): string[] {
  return [...new Set(policies.map((policy) => policy.eventType))].sort();
}
