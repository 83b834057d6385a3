import {
  AcquireAnswer,
  AcquireResult,
  FingerprintClaim,
  FingerprintedAcquireAnswer,
  IdempotencyKeyInspection,
  IdempotencyStore,
} from '../stores/idempotency-store.interface';

/**
 * The only way the library calls a store. A store that misbehaves (throws, even synchronously,
 * rejects, returns no promise, answers outside the protocol) must cost one record, never the
 * process: each becomes a rejected promise here, which the caller turns into a store error.
 */

/** What a store answered outside the protocol; the cause of the store error raised for it. */
export class StoreProtocolError extends Error {
  override readonly name = 'StoreProtocolError';
  readonly code: string = 'IDEMPOTENCY_STORE_PROTOCOL';
}

/**
 * `store.tryAcquire(...)`, checked: resolves to an `AcquireResult` (always, without `claim`) or rejects;
 * with `claim`, also to what the holding claim kept (a `null` fingerprint or message id, an empty
 * column, is absent).
 */
export async function acquireFrom(
  store: IdempotencyStore,
  key: string,
  ttlMs: number,
  token: string,
  claim?: FingerprintClaim,
): Promise<AcquireAnswer> {
  const answer = await promised(
    claim ? store.tryAcquire(key, ttlMs, token, claim) : store.tryAcquire(key, ttlMs, token),
    'tryAcquire',
  );
  if (isAcquireResult(answer)) return answer;
  if (claim && answer !== null && typeof answer === 'object') {
    const { result, fingerprint, messageId } = answer as Record<string, unknown>;
    if (isAcquireResult(result) && isOptionalString(fingerprint) && isOptionalString(messageId)) {
      return answer as FingerprintedAcquireAnswer;
    }
  }
  throw new StoreProtocolError(
    `tryAcquire resolved to ${describeAnswer(answer)}, not an AcquireResult (ACQUIRED, COMPLETED or IN_PROGRESS)` +
      (claim ? ' or { result, fingerprint?: string, messageId?: string }' : ''),
  );
}

/** `store.markComplete(...)`, checked: resolves to whether the claim was still owned. */
export function completeIn(
  store: IdempotencyStore,
  key: string,
  ttlMs: number,
  token: string,
): Promise<boolean> {
  return ownership(() => store.markComplete(key, ttlMs, token), 'markComplete');
}

/** The claims and completions `IdempotencyService` sends a store (batched: `store-call-batcher.ts`). */
export interface StoreCalls {
  /** `tryAcquire(key, ttlMs, token)`, checked: an `AcquireResult`, or a rejection (a store error). */
  acquire(key: string, ttlMs: number, token: string): Promise<AcquireResult>;
  /** `markComplete(key, ttlMs, token)`, checked: whether the claim was still owned, or a rejection. */
  complete(key: string, ttlMs: number, token: string): Promise<boolean>;
}

/** Every call its own round trip. Without a claim, the answer checked is a bare result. */
export function perKeyCalls(store: IdempotencyStore): StoreCalls {
  return {
    acquire: (key, ttlMs, token) => acquireFrom(store, key, ttlMs, token) as Promise<AcquireResult>,
    complete: (key, ttlMs, token) => completeIn(store, key, ttlMs, token),
  };
}

/** `store.forget(...)`, checked: resolves to whether the claim was still owned. */
export function forgetIn(store: IdempotencyStore, key: string, token: string): Promise<boolean> {
  return ownership(() => store.forget(key, token), 'forget');
}

/** `store.extend(...)`, checked (the store has `extend`): resolves to whether the lease was renewed. */
export function extendIn(
  store: IdempotencyStore,
  key: string,
  ttlMs: number,
  token: string,
): Promise<boolean> {
  return ownership(() => store.extend!(key, ttlMs, token), 'extend');
}

/** `inspect`, checked: only the fields its state allows, each a non-negative number. */
export async function inspectIn(store: IdempotencyStore, key: string): Promise<IdempotencyKeyInspection> {
  const answer = (await promised(store.inspect!(key), 'inspect')) as Record<string, unknown> | null;
  const state = answer?.state;
  const time = (field: string): number | undefined => {
    const value = answer?.[field];
    if (value === undefined) return undefined;
    if (typeof value === 'number' && value >= 0) return value;
    throw new StoreProtocolError(
      `inspect answered ${field} ${describeAnswer(value)}, not a number of ms >= 0`,
    );
  };
  if (state === 'UNKNOWN') return { state };
  if (state === 'COMPLETED') {
    const expiresInMs = time('expiresInMs');
    return expiresInMs === undefined ? { state } : { state, expiresInMs };
  }
  if (state === 'IN_PROGRESS') {
    const leaseLeftMs = time('leaseLeftMs');
    return leaseLeftMs === undefined ? { state } : { state, leaseLeftMs };
  }
  throw new StoreProtocolError(
    `inspect resolved to ${describeAnswer(answer)}, not { state: 'COMPLETED' | 'IN_PROGRESS' | 'UNKNOWN' }`,
  );
}

/** `true`/`void` means the attempt still owned the claim, `false` that it was lost; nothing else. */
async function ownership(call: () => unknown, method: string): Promise<boolean> {
  const answer = await promised(call(), method);
  if (answer === undefined || answer === true) return true;
  if (answer === false) return false;
  throw new StoreProtocolError(
    `${method} resolved to ${describeAnswer(answer)}, not true, false or undefined`,
  );
}

export function isAcquireResult(answer: unknown): answer is AcquireResult {
  return (
    answer === AcquireResult.ACQUIRED ||
    answer === AcquireResult.COMPLETED ||
    answer === AcquireResult.IN_PROGRESS
  );
}

function isOptionalString(value: unknown): boolean {
  return value === undefined || value === null || typeof value === 'string';
}

/** `value` if it is a promise (a thenable); else the protocol error naming `method`. */
export function promised(value: unknown, method: string): PromiseLike<unknown> {
  if (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  ) {
    return value as PromiseLike<unknown>;
  }
  throw new StoreProtocolError(`${method} returned ${describeAnswer(value)} instead of a promise`);
}

/** An answer as a message shows it: short, and never a function's source. */
export function describeAnswer(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  // A function's String() is its whole source: name it instead.
  if (typeof value === 'function') return `a function${value.name ? ` (${value.name})` : ''}`;
  if (value === null || value === undefined || typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return 'an array';
  try {
    return `the object ${JSON.stringify(value).slice(0, 120)}`;
  } catch {
    return 'an object';
  }
}
