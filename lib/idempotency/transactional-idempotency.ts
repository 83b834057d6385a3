import { AcquireResult, IdempotencyStore } from '../stores/idempotency-store.interface';
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

  /** Runs a keyed record of a transactional handler. */
  async run<T>(
    policy: IdempotencyPolicy,
    storeKey: string,
    token: string,
    lease: number,
    state: IdempotencyState,
    hostContext: unknown,
    run: () => Promise<T>,
  ): Promise<T | undefined> {
    const claimStarted = this.observer ? this.observer.claimStarted() : -1;
    const handler = this.handlerIn(state, run, () => {
      state.idempotencyOutcome = 'ACQUIRED';
      this.observer?.claimAnswered(claimStarted);
    });
    let outcome;
    try {
      outcome = await transactionIn(
        this.store,
        { key: storeKey, ttlMs: policy.ttl, token, idleTimeoutMs: lease },
        handler.run,
      );
    } catch (error) {
      if (handler.threw(error)) throw error;
      if (!handler.started) this.observer?.claimFailed();
      this.observer?.countClaimEvent(policy, 'store_errors');
      throw new IdempotencyStoreError('runInTransaction', storeKey, error, describeMessageOf(hostContext));
    }
    if (outcome.answer === AcquireResult.ACQUIRED) return outcome.result;
    this.observer?.claimAnswered(claimStarted);
    if (outcome.answer === AcquireResult.COMPLETED) {
      state.idempotencyOutcome = 'DUPLICATE';
      return undefined;
    }
    state.idempotencyOutcome = 'IN_PROGRESS';
    throw new IdempotencyInProgressError(storeKey, describeMessageOf(hostContext));
  }

  /** A keyless record (`requireKey: false`): the handler still gets a transaction, with no claim in it. */
  async runKeyless<T>(
    policy: IdempotencyPolicy,
    state: IdempotencyState,
    hostContext: unknown,
    run: () => Promise<T>,
  ): Promise<T | undefined> {
    const handler = this.handlerIn(state, run, () => undefined);
    try {
      const outcome = await transactionIn(this.store, undefined, handler.run);
      return outcome.answer === AcquireResult.ACQUIRED ? outcome.result : undefined;
    } catch (error) {
      if (handler.threw(error)) throw error;
      this.observer?.countClaimEvent(policy, 'store_errors');
      throw new IdempotencyStoreError('runInTransaction', '(no key)', error, describeMessageOf(hostContext));
    }
  }

  /** The handler as the store calls it: the transaction on the state, its own error told from the store's. */
  private handlerIn<T>(state: IdempotencyState, run: () => Promise<T>, claimed: () => void) {
    let thrown: { error: unknown } | undefined;
    const handler = {
      started: false,
      threw: (error: unknown) => thrown !== undefined && thrown.error === error,
      run: async (transaction: unknown): Promise<T> => {
        handler.started = true;
        claimed();
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
      },
    };
    return handler;
  }
}
