import {
  AcquireAnswer,
  AcquireResult,
  BatchClaim,
  BatchCompletion,
  FingerprintClaim,
  FingerprintedAcquireAnswer,
  IdempotencyKeyInspection,
  IdempotencyStore,
  TransactionalClaim,
  TransactionalRunAnswer,
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

/**
 * `tryAcquireMany`, checked: one answer per claim, an off-protocol one a `StoreProtocolError` that
 * fails that claim alone; rejects when the call fails or answers no array of the batch's length.
 */
export async function acquireManyFrom(
  store: IdempotencyStore,
  claims: readonly BatchClaim[],
): Promise<Array<AcquireResult | StoreProtocolError>> {
  const answers = await batchAnswers(store.tryAcquireMany!(claims), claims.length, 'tryAcquireMany');
  for (let i = 0; i < answers.length; i++) {
    if (!isAcquireResult(answers[i])) {
      answers[i] = new StoreProtocolError(
        `tryAcquireMany answered ${describeAnswer(answers[i])} for "${claims[i].key}", not an AcquireResult (ACQUIRED, COMPLETED or IN_PROGRESS)`,
      );
    }
  }
  return answers as Array<AcquireResult | StoreProtocolError>;
}

/** `markCompleteMany`, checked as `acquireManyFrom` is. */
export async function completeManyIn(
  store: IdempotencyStore,
  completions: readonly BatchCompletion[],
): Promise<Array<boolean | StoreProtocolError>> {
  const answers = await batchAnswers(
    store.markCompleteMany!(completions),
    completions.length,
    'markCompleteMany',
  );
  for (let i = 0; i < answers.length; i++) {
    if (answers[i] !== true && answers[i] !== false) {
      answers[i] = new StoreProtocolError(
        `markCompleteMany answered ${describeAnswer(answers[i])} for "${completions[i].key}", not true or false`,
      );
    }
  }
  return answers as Array<boolean | StoreProtocolError>;
}

/** The answers of a batch method, as a fresh array of `length` entries, or a rejection. */
async function batchAnswers(call: unknown, length: number, method: string): Promise<unknown[]> {
  const answers = await promised(call, method);
  if (Array.isArray(answers) && answers.length === length) return answers.slice();
  throw new StoreProtocolError(
    `${method} resolved to ${Array.isArray(answers) ? `${answers.length} answers` : describeAnswer(answers)} ` +
      `for a batch of ${length}, not an array of ${length} answers in order`,
  );
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

/** `runInTransaction`, checked: its answer, or `run`'s own error when `run` failed. */
export async function transactionIn<T>(
  store: IdempotencyStore,
  claim: TransactionalClaim | undefined,
  run: (transaction: unknown) => Promise<T>,
): Promise<TransactionalRunAnswer<T>> {
  const answer = (await promised(store.runInTransaction!(claim, run), 'runInTransaction')) as {
    answer?: unknown;
  } | null;
  if (answer !== null && typeof answer === 'object' && isAcquireResult(answer.answer)) {
    return answer as TransactionalRunAnswer<T>;
  }
  throw new StoreProtocolError(
    `runInTransaction resolved to ${describeAnswer(answer)}, not { answer: ACQUIRED | COMPLETED | IN_PROGRESS }`,
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

function isAcquireResult(answer: unknown): answer is AcquireResult {
  return (
    answer === AcquireResult.ACQUIRED ||
    answer === AcquireResult.COMPLETED ||
    answer === AcquireResult.IN_PROGRESS
  );
}

function isOptionalString(value: unknown): boolean {
  return value === undefined || value === null || typeof value === 'string';
}

function promised(value: unknown, method: string): PromiseLike<unknown> {
  if (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  ) {
    return value as PromiseLike<unknown>;
  }
  throw new StoreProtocolError(`${method} returned ${describeAnswer(value)} instead of a promise`);
}

function describeAnswer(value: unknown): string {
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
