import {
  AcquireResult,
  IdempotencyStore,
  TransactionalClaim,
  TransactionalRunAnswer,
} from '../stores/idempotency-store.interface';
import { IdempotencyInProgressError } from './idempotency.errors';
import { IdempotencyStoreError } from '../stores/idempotency-store.errors';
import type { IdempotencyPolicy } from './idempotency-policy';
import { describeMessageOf, IdempotencyState } from './idempotency-state';
import type { RecordObservers } from './record-observer';
import { describeAnswer, isAcquireResult, promised, StoreProtocolError } from './store-calls';

/**
 * The contract for transactional handlers: the store runs claim, handler and completion in one
 * database transaction, so there is no window between an applied effect and its completion.
 *
 *   runInTransaction ─┬─ ACQUIRED: handler(tx) ─┬─ resolves ─────────────▶ committed with the completion: OK
 *                     │                         ├─ SkipMessageException ─▶ completion committed alone: SKIPPED
 *                     │                         └─ any other error ──────▶ all rolled back: the record fails
 *                     ├─ COMPLETED ───▶ do not run; acked as a duplicate
 *                     └─ IN_PROGRESS ─▶ another open transaction holds the key: IdempotencyInProgressError
 *
 * A store failure fails the record whatever `onStoreError` says: with no transaction to give it, the
 * handler cannot run. Loaded where the store runs transactions.
 */
export class TransactionalIdempotency {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly observers?: RecordObservers,
  ) {}

  /**
   * Runs a record of a transactional handler under `claim`; without one (a keyless record,
   * `requireKey: false`) the handler still gets a transaction, with no claim in it.
   */
  async run<T>(
    policy: IdempotencyPolicy,
    claim: TransactionalClaim | undefined,
    state: IdempotencyState,
    hostContext: unknown,
    run: () => Promise<T>,
  ): Promise<T | undefined> {
    const observer = this.observers?.current;
    const claimStarted = claim && observer ? performance.now() : 0;
    let started = false;
    // The handler's own error, told from the store's.
    let thrown: { error: unknown } | undefined;
    let outcome;
    try {
      outcome = await transactionIn(this.store, claim, async (transaction) => {
        started = true;
        if (claim) {
          state.idempotencyOutcome = 'ACQUIRED';
          observer?.claimAnswered(performance.now() - claimStarted, AcquireResult.ACQUIRED);
        }
        state.transaction = transaction;
        try {
          return await run();
        } catch (error) {
          thrown = { error };
          throw error;
        } finally {
          // Committed or rolled back next: the object is of no use after the handler.
          state.transaction = undefined;
        }
      });
    } catch (error) {
      if (thrown !== undefined && thrown.error === error) throw error;
      if (claim && !started) observer?.claimFailed();
      observer?.countClaimEvent(policy, 'store_errors');
      const key = claim?.key ?? '(no key)';
      throw new IdempotencyStoreError('runInTransaction', key, error, describeMessageOf(hostContext));
    }
    if (outcome.answer === AcquireResult.ACQUIRED) return outcome.result;
    if (!claim) return undefined;
    observer?.claimAnswered(performance.now() - claimStarted, outcome.answer);
    if (outcome.answer === AcquireResult.COMPLETED) {
      state.idempotencyOutcome = 'DUPLICATE';
      return undefined;
    }
    state.idempotencyOutcome = 'IN_PROGRESS';
    throw new IdempotencyInProgressError(claim.key, describeMessageOf(hostContext));
  }
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
