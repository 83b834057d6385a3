import { Logger } from '@nestjs/common';
import {
  AcquireAnswer,
  AcquireResult,
  FingerprintClaim,
  IdempotencyStore,
} from '../stores/idempotency-store.interface';
import { IdempotencyStoreError } from '../stores/idempotency-store.errors';
import { IdempotencyInProgressError } from './idempotency.errors';
import { IdempotencyPolicy, recordKeyOf, storeKeyFor } from './idempotency-policy';
import { describeMessageOf, IdempotencyState, remainingTimeOf } from './idempotency-state';
import type { AttemptTokens } from './attempt-tokens';
import type { LeaseHeartbeat } from './lease-heartbeat';
import type { RecordObserver } from './record-observer';
import { isFailedStatus, outcomeOfError, SqsHandlerOutcome } from './record-outcome';
import { acquireFrom, completeIn, forgetIn, StoreProtocolError } from './store-calls';
import { acquireManyFrom, completeManyIn } from './store-call-batcher';

/**
 * The claims of a batch handler's events (`@SqsBatchHandler()` under `@Idempotent()`), loaded at the first
 * batch handler call. The contract is the single handler's (`idempotency.service.ts`), applied to every
 * event of the call at once:
 *
 *   resolve each key ─▶ one tryAcquireMany (or tryAcquire per key, side by side) ─┬─ ACQUIRED ──▶ to the handler
 *                                                                                ├─ COMPLETED ─▶ DUPLICATE, acked
 *                                                                                ├─ IN_PROGRESS ▶ fails, redelivered
 *                                                                                └─ other fingerprint ▶ fails
 *   handler's results ─▶ succeeded: one markCompleteMany (or markComplete per key); failed: forget per key
 *
 * A key given twice in one batch is claimed once; its copy waits for the first's result (`copyOf`).
 * Keyless events (`requireKey: false`) and unclaimed ones (`onStoreError: 'process'`) run without a claim.
 * Each key keeps its own token and lease: fencing stays per key, as for single records.
 */

/** One event of the call: its payload (the event), its host context and that context's state. */
export interface BatchHandlerEntry {
  readonly payload: unknown;
  readonly hostContext: unknown;
  readonly state: IdempotencyState;
}

/** What the claim decided for an entry: run it, settle it now with `outcome`, or wait for the entry `copyOf`. */
export type BatchClaimDecision =
  | { readonly run: true }
  | { readonly run: false; readonly outcome: SqsHandlerOutcome }
  | { readonly run: false; readonly copyOf: number };

/** What a batch handler's call did: an outcome per event it was given, and what it threw, if it threw. */
export interface BatchCallOutcome {
  readonly outcomes: readonly SqsHandlerOutcome[];
  readonly thrown?: { readonly error: unknown };
}

/** What the claims need of `IdempotencyService`. */
export interface BatchHandlerClaimsDeps {
  readonly store: IdempotencyStore;
  readonly tokens: AttemptTokens;
  /** The lease renewal class, where the module sets `heartbeat` and the store can `extend`. */
  readonly heartbeats: typeof LeaseHeartbeat | undefined;
  observer(): RecordObserver | undefined;
  leaseFor(policy: IdempotencyPolicy, hostContext: unknown): number;
}

const RUN: BatchClaimDecision = Object.freeze({ run: true });

/** The claims of one batch call: what was decided per entry, and what settling needs. */
export class ClaimedBatch {
  readonly decisions: BatchClaimDecision[];
  /** Per entry, the store key, token and lease of its claim (`undefined` where none was made). */
  readonly storeKeys: Array<string | undefined>;
  readonly tokens: Array<string | undefined>;
  readonly leases: number[];
  /** Per entry, whether it owns a claim to settle. */
  readonly acquired: boolean[];
  heartbeats: Array<LeaseHeartbeat | undefined> = [];

  constructor(
    readonly policy: IdempotencyPolicy,
    readonly entries: readonly BatchHandlerEntry[],
  ) {
    const count = entries.length;
    this.decisions = new Array<BatchClaimDecision>(count).fill(RUN);
    this.storeKeys = new Array<string | undefined>(count);
    this.tokens = new Array<string | undefined>(count);
    this.leases = new Array<number>(count).fill(0);
    this.acquired = new Array<boolean>(count).fill(false);
  }
}

export class BatchHandlerClaims {
  private readonly logger = new Logger('Idempotency');

  constructor(private readonly deps: BatchHandlerClaimsDeps) {}

  /** Resolves every entry's key and claims the new ones in one turn. Never rejects. */
  async claim(policy: IdempotencyPolicy, entries: readonly BatchHandlerEntry[]): Promise<ClaimedBatch> {
    const batch = new ClaimedBatch(policy, entries);
    const fingerprints: Array<FingerprintClaim | undefined> = [];
    const claimed = this.resolveKeys(batch, fingerprints);
    const answers = await this.acquire(batch, claimed, fingerprints);
    for (let j = 0; j < claimed.length; j++) this.decide(batch, claimed[j], answers[j], fingerprints);
    return batch;
  }

  /**
   * A transactional batch handler's call (`@Idempotent({ transactional: true })`, the store's
   * `runBatchInTransaction`): the claims, `call` (the handler, given the entries to run and the
   * transaction) and the completions in one transaction. A throw of the call rolls it all back (every event
   * it was given fails, nothing stays claimed); a `SkipMessageException` commits the completions alone.
   * Resolves to the decisions and the outcomes of the entries run; never rejects.
   */
  async runTransactional(
    policy: IdempotencyPolicy,
    entries: readonly BatchHandlerEntry[],
    call: (running: readonly number[], transaction: unknown) => Promise<BatchCallOutcome>,
  ): Promise<{ batch: ClaimedBatch; outcomes: Map<number, SqsHandlerOutcome> }> {
    const batch = new ClaimedBatch(policy, entries);
    const claimed = this.resolveKeys(batch, []);
    const outcomes = new Map<number, SqsHandlerOutcome>();
    const { store } = this.deps;
    const observer = this.deps.observer();
    const started = observer ? performance.now() : 0;
    let running: number[] = [];
    let thrown: { error: unknown } | undefined;
    try {
      if (typeof store.runBatchInTransaction !== 'function') {
        throw new Error(
          "the store runs single transactions (runInTransaction) but not a batch handler's (runBatchInTransaction)",
        );
      }
      const claims = claimed.map((i) => ({
        key: batch.storeKeys[i]!,
        ttlMs: policy.ttl,
        token: batch.tokens[i]!,
        idleTimeoutMs: batch.leases[i],
      }));
      await store.runBatchInTransaction(claims, async (transaction, answers) => {
        if (observer)
          for (const answer of answers) observer.claimAnswered(performance.now() - started, answer);
        for (let j = 0; j < claimed.length; j++) this.decide(batch, claimed[j], answers[j], []);
        running = [];
        batch.decisions.forEach((decision, i) => decision.run && running.push(i));
        if (running.length === 0) return { result: undefined, release: [] };
        const ran = await call(running, transaction);
        if (ran.thrown !== undefined) {
          thrown = ran.thrown;
          throw ran.thrown.error; // rolls back (a skip commits the completions alone)
        }
        running.forEach((i, j) => outcomes.set(i, ran.outcomes[j]));
        const release = claimed
          .map((i, j) => (isFailedStatus(outcomes.get(i)?.status ?? 'OK') ? j : -1))
          .filter((j) => j >= 0);
        return { result: undefined, release };
      });
    } catch (error) {
      if (thrown !== undefined && thrown.error === error) {
        const outcome = outcomeOfError(error);
        for (const i of running) outcomes.set(i, outcome);
      } else {
        // The store failed (before, during or at the commit): nothing of the call is committed.
        if (running.length === 0) observer?.claimFailed();
        observer?.countClaimEvent(policy, 'store_errors');
        batch.decisions.forEach((decision, i) => {
          if (!decision.run) return; // its answer stands (a duplicate, in flight), or it follows its first copy
          const key = batch.storeKeys[i] ?? '(no key)';
          const failure = new IdempotencyStoreError(
            'runBatchInTransaction',
            key,
            error,
            describeMessageOf(entries[i].hostContext),
          );
          batch.decisions[i] = { run: false, outcome: { status: 'FAILED', error: failure } };
          outcomes.delete(i);
        });
      }
    }
    return { batch, outcomes };
  }

  /**
   * Each entry's key, store key, token and lease, the copies and keyless entries decided; the indices of
   * the entries to claim (each key once). `fingerprints` gets each claim's, where the policy has them.
   */
  private resolveKeys(batch: ClaimedBatch, fingerprints: Array<FingerprintClaim | undefined>): number[] {
    const { policy, entries } = batch;
    const firstOfKey = new Map<string, number>();
    const claimed: number[] = [];
    for (let i = 0; i < entries.length; i++) {
      const { payload, hostContext, state } = entries[i];
      try {
        const key = recordKeyOf(policy, payload, hostContext);
        if (key === undefined) {
          state.idempotencyOutcome = 'KEYLESS';
          continue;
        }
        state.idempotencyKey = key;
        const first = firstOfKey.get(key);
        if (first !== undefined) {
          batch.decisions[i] = { run: false, copyOf: first };
          continue;
        }
        firstOfKey.set(key, i);
        batch.storeKeys[i] = storeKeyFor(policy, key);
        batch.tokens[i] = this.deps.tokens.next();
        batch.leases[i] = this.deps.leaseFor(policy, hostContext);
        fingerprints[i] = policy.fingerprint?.claimOf(policy, payload, hostContext);
        claimed.push(i);
      } catch (error) {
        batch.decisions[i] = { run: false, outcome: outcomeOfError(error) };
      }
    }
    return claimed;
  }

  /** The claims' answers, in the order of `claimed`: one batch call where the store has one, else a call per key. */
  private async acquire(
    batch: ClaimedBatch,
    claimed: readonly number[],
    fingerprints: ReadonlyArray<FingerprintClaim | undefined>,
  ): Promise<Array<AcquireAnswer | { error: unknown }>> {
    const { store } = this.deps;
    const observer = this.deps.observer();
    const started = observer ? performance.now() : 0;
    const entry = (i: number) => ({
      key: batch.storeKeys[i]!,
      ttlMs: batch.leases[i],
      token: batch.tokens[i]!,
    });
    let answers: Array<AcquireAnswer | { error: unknown }>;
    if (
      claimed.length > 1 &&
      batch.policy.fingerprint === undefined &&
      typeof store.tryAcquireMany === 'function'
    ) {
      try {
        const many = await acquireManyFrom(store, claimed.map(entry));
        answers = many.map((answer) => (answer instanceof StoreProtocolError ? { error: answer } : answer));
      } catch (error) {
        answers = claimed.map(() => ({ error }));
      }
    } else {
      const settled = await Promise.allSettled(
        claimed.map((i) => {
          const { key, ttlMs, token } = entry(i);
          return acquireFrom(store, key, ttlMs, token, fingerprints[i]);
        }),
      );
      answers = settled.map((one) => (one.status === 'fulfilled' ? one.value : { error: one.reason }));
    }
    if (observer) {
      const elapsed = performance.now() - started;
      for (const answer of answers) {
        if (!isFailedCall(answer))
          observer.claimAnswered(elapsed, typeof answer === 'object' ? answer.result : answer);
      }
    }
    return answers;
  }

  /** An entry's decision from its claim's answer, as `IdempotencyService.execute` decides a record's. */
  private decide(
    batch: ClaimedBatch,
    i: number,
    answer: AcquireAnswer | { error: unknown },
    fingerprints: ReadonlyArray<FingerprintClaim | undefined>,
  ): void {
    const { policy } = batch;
    const { hostContext, state } = batch.entries[i];
    const storeKey = batch.storeKeys[i]!;
    const observer = this.deps.observer();
    if (isFailedCall(answer)) {
      observer?.claimFailed();
      observer?.countClaimEvent(policy, 'store_errors');
      if (policy.onStoreError === 'fail') {
        const error = new IdempotencyStoreError(
          'tryAcquire',
          storeKey,
          answer.error,
          describeMessageOf(hostContext),
        );
        batch.decisions[i] = { run: false, outcome: { status: 'FAILED', error } };
        return;
      }
      this.logger.error(
        `Store failed to claim "${storeKey}" (${describe(answer.error)}); running ${policy.handlerName} without dedup (onStoreError: 'process').`,
      );
      state.idempotencyOutcome = 'UNCLAIMED';
      return;
    }
    let result: AcquireResult;
    if (typeof answer === 'string') result = answer;
    else {
      result = answer.result;
      const mismatch = policy.fingerprint!.mismatchOf(storeKey, answer, fingerprints[i]!, hostContext);
      if (mismatch) {
        state.idempotencyOutcome = 'FINGERPRINT_MISMATCH';
        observer?.countClaimEvent(policy, 'fingerprint_mismatches');
        batch.decisions[i] = { run: false, outcome: { status: 'FAILED', error: mismatch } };
        return;
      }
    }
    if (result === AcquireResult.COMPLETED) {
      state.idempotencyOutcome = 'DUPLICATE';
      batch.decisions[i] = { run: false, outcome: { status: 'DUPLICATE' } };
    } else if (result !== AcquireResult.ACQUIRED) {
      state.idempotencyOutcome = 'IN_PROGRESS';
      const error = new IdempotencyInProgressError(storeKey, describeMessageOf(hostContext));
      batch.decisions[i] = { run: false, outcome: { status: 'IN_PROGRESS', error } };
    } else {
      state.idempotencyOutcome = 'ACQUIRED';
      batch.acquired[i] = true;
    }
  }

  /** Starts the lease renewal of every claim the call holds (one per key, each with its own lease). */
  startHeartbeats(batch: ClaimedBatch): void {
    const Heartbeat = this.deps.heartbeats;
    if (!batch.policy.heartbeat || Heartbeat === undefined) return;
    const { policy } = batch;
    batch.heartbeats = batch.acquired.map((acquired, i) => {
      if (!acquired) return undefined;
      const storeKey = batch.storeKeys[i]!;
      const deadline = performance.now() + remainingTimeOf(batch.entries[i].hostContext);
      return new Heartbeat(this.deps.store, storeKey, batch.leases[i], batch.tokens[i]!, deadline, {
        lost: () => {
          this.deps.observer()?.countClaimEvent(policy, 'leases_lost');
          this.logger.warn(
            `Lost the claim on "${storeKey}" while ${policy.handlerName} runs its batch: the lease could not be ` +
              'extended (it expired before a heartbeat reached the store, or another attempt took the key).',
          );
        },
        failed: (error) => {
          this.deps.observer()?.countClaimEvent(policy, 'store_errors');
          this.logger.error(`Store failed to extend the lease on "${storeKey}" (${describe(error)}).`);
        },
      });
    });
  }

  /**
   * Settles the claims the call held: `completed[i]` for a success or a skip (marked completed, in one
   * `markCompleteMany` where the store has it), else released (`forget`). A store failure or a lost claim
   * is logged and counted per key, as for single records; the records' outcomes stay as they are.
   */
  async settle(batch: ClaimedBatch, completed: readonly boolean[]): Promise<void> {
    for (const heartbeat of batch.heartbeats) heartbeat?.stop();
    const completing: number[] = [];
    const releasing: number[] = [];
    batch.acquired.forEach((acquired, i) => {
      if (acquired) (completed[i] ? completing : releasing).push(i);
    });
    await Promise.all([this.complete(batch, completing), ...releasing.map((i) => this.release(batch, i))]);
  }

  private async complete(batch: ClaimedBatch, indices: readonly number[]): Promise<void> {
    if (indices.length === 0) return;
    const { store } = this.deps;
    const { policy } = batch;
    const entry = (i: number) => ({ key: batch.storeKeys[i]!, ttlMs: policy.ttl, token: batch.tokens[i]! });
    let answers: Array<boolean | { error: unknown }>;
    if (indices.length > 1 && typeof store.markCompleteMany === 'function') {
      try {
        const many = await completeManyIn(store, indices.map(entry));
        answers = many.map((answer) => (answer instanceof StoreProtocolError ? { error: answer } : answer));
      } catch (error) {
        answers = indices.map(() => ({ error }));
      }
    } else {
      const settled = await Promise.allSettled(
        indices.map((i) => completeIn(store, batch.storeKeys[i]!, policy.ttl, batch.tokens[i]!)),
      );
      answers = settled.map((one) => (one.status === 'fulfilled' ? one.value : { error: one.reason }));
    }
    indices.forEach((i, j) => this.report(batch, i, 'completed', answers[j]));
  }

  private async release(batch: ClaimedBatch, i: number): Promise<void> {
    let answer: boolean | { error: unknown };
    try {
      answer = await forgetIn(this.deps.store, batch.storeKeys[i]!, batch.tokens[i]!);
    } catch (error) {
      answer = { error };
    }
    this.report(batch, i, 'failed', answer);
  }

  /** What `IdempotencyService.settle` says of a settle that failed or found the claim lost. */
  private report(
    batch: ClaimedBatch,
    i: number,
    outcome: 'completed' | 'failed',
    answer: boolean | { error: unknown },
  ): void {
    if (answer === true) return;
    const { policy } = batch;
    const storeKey = batch.storeKeys[i]!;
    const observer = this.deps.observer();
    const completed = outcome === 'completed';
    if (answer !== false) {
      observer?.countClaimEvent(policy, 'store_errors');
      if (completed) observer?.countClaimEvent(policy, 'completions_lost');
      this.logger.error(
        completed
          ? `Store failed to mark "${storeKey}" completed (${describe(answer.error)}); a duplicate arriving after the ` +
              `lease (${policy.inProgressTtl} ms) may run ${policy.handlerName} again.`
          : `Store failed to release "${storeKey}" after ${policy.handlerName} failed (${describe(answer.error)}); ` +
              'redeliveries meet IN_PROGRESS until the lease expires.',
      );
      return;
    }
    if (batch.heartbeats[i]?.lost !== true) observer?.countClaimEvent(policy, 'leases_lost');
    this.logger.warn(
      completed
        ? `Lost the claim on "${storeKey}" before ${policy.handlerName} completed its batch: the lease (inProgressTtl ` +
            `${policy.inProgressTtl} ms) expired and another attempt took the key, so the event may have been handled ` +
            'twice. Raise inProgressTtl above the worst-case handler time or enable heartbeat.'
        : `Lost the claim on "${storeKey}" before ${policy.handlerName} failed: another attempt owns the key ` +
            `now (the lease of ${policy.inProgressTtl} ms expired); its claim was left alone.`,
    );
  }
}

function isFailedCall(answer: unknown): answer is { error: unknown } {
  return answer !== null && typeof answer === 'object' && 'error' in answer;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
