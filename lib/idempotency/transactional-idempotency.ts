import { AcquireResult, IdempotencyStore, TransactionalClaim } from '../stores/idempotency-store.interface';
import { IdempotencyInProgressError } from './idempotency.errors';
import { IdempotencyStoreError } from '../stores/idempotency-store.errors';
import type { IdempotencyPolicy } from './idempotency-policy';
import { describeMessageOf, IdempotencyState } from './idempotency-state';
import type { RecordObserver } from './record-observer';
import { transactionIn } from './store-calls';

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
 * handler cannot run.
 */
export class TransactionalIdempotency {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly observer?: RecordObserver,
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
    const claimStarted = claim && this.observer ? this.observer.claimStarted() : -1;
    let started = false;
    // The handler's own error, told from the store's.
    let thrown: { error: unknown } | undefined;
    let outcome;
    try {
      outcome = await transactionIn(this.store, claim, async (transaction) => {
        started = true;
        if (claim) {
          state.idempotencyOutcome = 'ACQUIRED';
          this.observer?.claimAnswered(claimStarted);
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
      if (claim && !started) this.observer?.claimFailed();
      this.observer?.countClaimEvent(policy, 'store_errors');
      const key = claim?.key ?? '(no key)';
      throw new IdempotencyStoreError('runInTransaction', key, error, describeMessageOf(hostContext));
    }
    if (outcome.answer === AcquireResult.ACQUIRED) return outcome.result;
    if (!claim) return undefined;
    this.observer?.claimAnswered(claimStarted);
    if (outcome.answer === AcquireResult.COMPLETED) {
      state.idempotencyOutcome = 'DUPLICATE';
      return undefined;
    }
    state.idempotencyOutcome = 'IN_PROGRESS';
    throw new IdempotencyInProgressError(claim.key, describeMessageOf(hostContext));
  }
}
