import { Inject, Injectable, Logger, OnModuleInit, Optional } from '@nestjs/common';
import { isObservable, lastValueFrom, Observable } from 'rxjs';
import {
  AcquireResult,
  FingerprintedAcquireAnswer,
  handlesBatches,
  IdempotencyStore,
  runsTransactions,
} from '../stores/idempotency-store.interface';
import { IdempotencyInProgressError } from './idempotency.errors';
import { IdempotencyStoreError } from '../stores/idempotency-store.errors';
import { IdempotencyPolicy, recordKeyOf, storeKeyFor } from './idempotency-policy';
import { IDEMPOTENCY_MODULE_OPTIONS } from './idempotency.constants';
import type { ResolvedIdempotencyOptions } from './idempotency-options.interface';
import { describeMessageOf, IdempotencyState, remainingTimeOf } from './idempotency-state';
import { isSkipMessageException } from '../common/skip-message.exception';
import { AttemptTokens } from './attempt-tokens';
import type { LeaseHeartbeat } from './lease-heartbeat';
import { acquireFrom, forgetIn, perKeyCalls, StoreCalls } from './store-calls';
import type { TransactionalIdempotency } from './transactional-idempotency';
import type { BatchHandlerClaims } from './batch-handler.claims';
import { type RecordObserver, RecordObservers } from './record-observer';

/** A handler call: its value, a promise, or an observable consumed to its last value (as Nest does). */
export type HandlerRun<T> = () => T | PromiseLike<T> | Observable<T>;

/** `run`'s outcome as a value: awaited, and an observable consumed to its last value. */
export async function outcomeOf<T>(run: HandlerRun<T>): Promise<T> {
  const result = await run();
  return isObservable(result) ? lastValueFrom(result, { defaultValue: undefined as T }) : result;
}

/** The shortest lease ever requested, so a Lambda with no time left still gets a claim that can expire. */
const MIN_LEASE_MS = 1_000;

/**
 * Runs one handler call under an idempotency claim: the contract, host-neutral (the interceptor only
 * adapts Nest's `ExecutionContext` to it).
 *
 *   tryAcquire ─┬─ ACQUIRED ────▶ run ─┬─ success / SkipMessageException ─▶ markComplete(ttl)
 *               │                      └─ any other error ─────────────────▶ forget (redelivery retries)
 *               ├─ COMPLETED ───▶ do not run; the message is acked as a duplicate
 *               ├─ IN_PROGRESS ─▶ fail with IdempotencyInProgressError; SQS redelivers later
 *               └─ COMPLETED or IN_PROGRESS under another payload fingerprint (handlers with a
 *                  `fingerprint`) ─▶ fail with IdempotencyFingerprintMismatchError; never run nor acked
 *
 * Transactional handlers take the store's `runInTransaction` instead (`transactional-idempotency.ts`).
 * Every attempt carries a fresh token, so a fencing store refuses a stale owner's writes; a refusal
 * means the lease expired under the handler, and is logged and counted.
 */
@Injectable()
export class IdempotencyService implements OnModuleInit {
  private readonly logger = new Logger('Idempotency');
  /**
   * Transactional handlers' records (`@Idempotent({ transactional: true })`): claim, writes and
   * completion in one transaction. Loaded at bootstrap where the store runs transactions, the one
   * store where a handler may be transactional.
   */
  private transactions: TransactionalIdempotency | undefined;
  /** Claims and completions: a turn's worth in one batch call where the store has the batch methods. */
  private calls: StoreCalls;
  /** The lease renewal, loaded where the module sets `heartbeat` and the store can `extend`. */
  private heartbeats: typeof LeaseHeartbeat | undefined;
  /** One per attempt: fencing needs them unique, not random (`attempt-tokens.ts`). */
  private readonly tokens = new AttemptTokens();
  /** The claims of batch handlers' events, loaded at the first batch handler call. */
  private batchClaims: Promise<BatchHandlerClaims> | undefined;

  constructor(
    @Inject(IdempotencyStore) private readonly store: IdempotencyStore,
    @Optional() private readonly observers?: RecordObservers,
    @Optional() @Inject(IDEMPOTENCY_MODULE_OPTIONS) private readonly options?: ResolvedIdempotencyOptions,
  ) {
    this.calls = perKeyCalls(store);
  }

  /** Loads what the options and the store call for: the batcher, the lease renewal, the transactional claim. */
  async onModuleInit(): Promise<void> {
    const store = this.store;
    if (handlesBatches(store)) {
      const observers = this.observers;
      this.calls = (await import('./store-call-batcher')).storeCallsFor(store, () => observers?.batchCalls);
    }
    if (this.options?.heartbeat && typeof store.extend === 'function') {
      this.heartbeats = (await import('./lease-heartbeat')).LeaseHeartbeat;
    }
    if (runsTransactions(store)) {
      const { TransactionalIdempotency } = await import('./transactional-idempotency');
      this.transactions = new TransactionalIdempotency(store, this.observers);
    }
  }

  /**
   * The claims of `@SqsBatchHandler()` calls (`batch-handler.claims.ts`): the same store, tokens, leases
   * and observer as single records, their code loaded where an app calls a batch handler.
   */
  batchHandlerClaims(): Promise<BatchHandlerClaims> {
    return (this.batchClaims ??= import('./batch-handler.claims').then(
      ({ BatchHandlerClaims }) =>
        new BatchHandlerClaims({
          store: this.store,
          tokens: this.tokens,
          heartbeats: this.heartbeats,
          observer: () => this.observer,
          leaseFor: (policy, hostContext) => this.leaseFor(policy, hostContext),
        }),
    ));
  }

  /** What watches the claims: read where it is used (observers are installed during the bootstrap). */
  private get observer(): RecordObserver | undefined {
    return this.observers?.current;
  }

  /**
   * Runs `run` (the handler, and what Nest runs after this interceptor) under the claim of the
   * message's key, consuming an observable to its last value as Nest does. Whatever it rejects with is
   * also kept as `state.handlerError`. One async function from claim to completion, on purpose: see
   * `bench/PROFILE.md`, "One async function from claim to completion".
   */
  async execute<T>(
    policy: IdempotencyPolicy,
    payload: unknown,
    hostContext: unknown,
    state: IdempotencyState,
    run: HandlerRun<T>,
  ): Promise<T | undefined> {
    try {
      const key = recordKeyOf(policy, payload, hostContext);
      if (key === undefined) {
        state.idempotencyOutcome = 'KEYLESS';
        if (policy.transactional) {
          return await this.transactions!.run(policy, undefined, state, hostContext, () => outcomeOf(run));
        }
        return await outcomeOf(run);
      }
      state.idempotencyKey = key;
      const storeKey = storeKeyFor(policy, key);
      const token = this.tokens.next();
      const lease = this.leaseFor(policy, hostContext);
      if (policy.transactional) {
        const opened = { key: storeKey, ttlMs: policy.ttl, token, idleTimeoutMs: lease };
        return await this.transactions!.run(policy, opened, state, hostContext, () => outcomeOf(run));
      }
      // With a fingerprint the claim keeps it, and answers the one the key's holder kept.
      const fingerprint = policy.fingerprint;
      const claim = fingerprint && fingerprint.claimOf(policy, payload, hostContext);

      // The claim's time feeds the Center's store health; no clock is read when nothing observes.
      const observer = this.observer;
      const claimStarted = observer ? performance.now() : 0;
      let answer: AcquireResult;
      let held: FingerprintedAcquireAnswer | undefined;
      try {
        if (claim) {
          const found = await acquireFrom(this.store, storeKey, lease, token, claim);
          // An object says what the holding claim kept; a bare result, that there is nothing to compare.
          if (typeof found === 'string') answer = found;
          else {
            held = found;
            answer = found.result;
          }
        } else {
          answer = await this.calls.acquire(storeKey, lease, token);
        }
        observer?.claimAnswered(performance.now() - claimStarted, answer);
      } catch (error) {
        // With onStoreError: 'fail' the record fails, else the handler runs without dedup.
        observer?.claimFailed();
        observer?.countClaimEvent(policy, 'store_errors');
        if (policy.onStoreError === 'fail') {
          throw new IdempotencyStoreError('tryAcquire', storeKey, error, describeMessageOf(hostContext));
        }
        this.logger.error(
          `Store failed to claim "${storeKey}" (${describe(error)}); running ${policy.handlerName} without dedup (onStoreError: 'process').`,
        );
        state.idempotencyOutcome = 'UNCLAIMED';
        return await outcomeOf(run);
      }

      const mismatch = held && fingerprint!.mismatchOf(storeKey, held, claim!, hostContext);
      if (mismatch) {
        state.idempotencyOutcome = 'FINGERPRINT_MISMATCH';
        observer?.countClaimEvent(policy, 'fingerprint_mismatches');
        throw mismatch;
      }
      if (answer === AcquireResult.COMPLETED) {
        state.idempotencyOutcome = 'DUPLICATE';
        return undefined;
      }
      if (answer !== AcquireResult.ACQUIRED) {
        state.idempotencyOutcome = 'IN_PROGRESS';
        throw new IdempotencyInProgressError(storeKey, describeMessageOf(hostContext));
      }

      // Claimed: run, then settle the claim from the outcome.
      state.idempotencyOutcome = 'ACQUIRED';
      const heartbeat = policy.heartbeat
        ? this.startHeartbeat(policy, storeKey, lease, token, hostContext)
        : undefined;
      let result: T;
      try {
        // `outcomeOf(run)`, inlined: its promise would be one more layer per record.
        const value = await run();
        result = isObservable(value) ? await lastValueFrom(value, { defaultValue: undefined as T }) : value;
      } catch (error) {
        heartbeat?.stop();
        const outcome = isSkipMessageException(error) ? 'completed' : 'failed';
        await this.settle(outcome, policy, storeKey, token, heartbeat?.lost === true);
        throw error;
      }
      heartbeat?.stop();
      await this.settle('completed', policy, storeKey, token, heartbeat?.lost === true);
      return result;
    } catch (error) {
      // Kept for RPC transports, whose exception filters replace it before they see it.
      state.handlerError = error;
      throw error;
    }
  }

  /**
   * `markComplete` after a success or a skip, `forget` after a failure. A store failure here does not
   * change the record's outcome, but a completion not recorded leaves the event unprotected, so it is
   * counted as well as logged. A refusal (`false`) is a lease lost: the lease expired under the handler
   * and another attempt owns the key; counted once per claim.
   */
  private async settle(
    outcome: 'completed' | 'failed',
    policy: IdempotencyPolicy,
    storeKey: string,
    token: string,
    lossReported: boolean,
  ): Promise<void> {
    const completed = outcome === 'completed';
    let owned: boolean;
    try {
      owned = completed
        ? await this.calls.complete(storeKey, policy.ttl, token)
        : await forgetIn(this.store, storeKey, token);
    } catch (error) {
      this.observer?.countClaimEvent(policy, 'store_errors');
      if (completed) this.observer?.countClaimEvent(policy, 'completions_lost');
      this.logger.error(
        completed
          ? `Store failed to mark "${storeKey}" completed (${describe(error)}); a duplicate arriving after the ` +
              `lease (${policy.inProgressTtl} ms) may run ${policy.handlerName} again.`
          : `Store failed to release "${storeKey}" after ${policy.handlerName} failed (${describe(error)}); ` +
              'redeliveries meet IN_PROGRESS until the lease expires.',
      );
      return;
    }
    if (owned) return;
    if (!lossReported) this.observer?.countClaimEvent(policy, 'leases_lost');
    this.logger.warn(
      completed
        ? `Lost the claim on "${storeKey}" before ${policy.handlerName} completed: the lease (inProgressTtl ` +
            `${policy.inProgressTtl} ms) expired and another attempt took the key, so the handler may have run ` +
            'twice. Raise inProgressTtl above the worst-case handler time or enable heartbeat.'
        : `Lost the claim on "${storeKey}" before ${policy.handlerName} failed: another attempt owns the key ` +
            `now (the lease of ${policy.inProgressTtl} ms expired); its claim was left alone.`,
    );
  }

  private startHeartbeat(
    policy: IdempotencyPolicy,
    storeKey: string,
    lease: number,
    token: string,
    hostContext: unknown,
  ): LeaseHeartbeat | undefined {
    const Heartbeat = this.heartbeats;
    if (Heartbeat === undefined) return undefined; // the store cannot extend a lease
    // A host with a deadline (Lambda) kills the attempt then: no renewal may outlive it.
    const deadline = performance.now() + remainingTimeOf(hostContext);
    return new Heartbeat(this.store, storeKey, lease, token, deadline, {
      lost: () => {
        this.observer?.countClaimEvent(policy, 'leases_lost');
        this.logger.warn(
          `Lost the claim on "${storeKey}" while ${policy.handlerName} runs: the lease could not be extended ` +
            '(it expired before a heartbeat reached the store, or another attempt took the key).',
        );
      },
      failed: (error) => {
        this.observer?.countClaimEvent(policy, 'store_errors');
        this.logger.error(`Store failed to extend the lease on "${storeKey}" (${describe(error)}).`);
      },
    });
  }

  /** The configured lease, capped by the time the host has left (a Lambda's deadline), never below 1 s. */
  private leaseFor(policy: IdempotencyPolicy, hostContext: unknown): number {
    const remaining = Math.max(Math.ceil(remainingTimeOf(hostContext)), MIN_LEASE_MS);
    return Math.min(policy.inProgressTtl, remaining);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
