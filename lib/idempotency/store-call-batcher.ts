import { setImmediate } from 'node:timers';
import {
  AcquireResult,
  BatchClaim,
  BatchCompletion,
  handlesBatches,
  IdempotencyStore,
} from '../stores/idempotency-store.interface';
import {
  acquireFrom,
  completeIn,
  describeAnswer,
  isAcquireResult,
  perKeyCalls,
  promised,
  StoreCalls,
  StoreProtocolError,
} from './store-calls';
import type { BatchCallTracer } from './record-observer';

/**
 * The claims and completions `IdempotencyService` sends a store with both batch methods, a turn's
 * worth at a time (loaded only for such a store).
 *
 * A batch's records run side by side, so their claims (and, for quick handlers, their completions)
 * are asked for within one turn of the event loop. They go out as `tryAcquireMany` /
 * `markCompleteMany` calls of up to `MAX_BATCH_ENTRIES` (on Redis, one script call instead of one per
 * record): a call leaves as soon as it is full, the rest when the turn ends; a lone entry goes as the
 * single method (`SET NX` is cheaper than a script for one key). Each record still gets its own
 * answer, key, lease and token: fencing stays the store's, per key.
 *
 * Per key always: fingerprinted claims, `forget`, `extend`, transactional runs, and stores without
 * both batch methods (the in-memory store among them: a batch saves it no round trip, and waiting for
 * the turn to end cost more than its claim, `bench/PROFILE.md`). Nothing is claimed ahead of a record the batch rules run, so a
 * halted FIFO group leaves its later records unclaimed. A batch call that fails or answers off protocol
 * fails every record of it (a store error, `onStoreError`); one bad answer fails its record alone.
 *
 * The turn's end is `setImmediate` from `node:timers`, which Jest's fake timers leave real.
 */

/**
 * The calls for `store`: batched where it has both batch methods. `tracer`: read at each entry, the
 * batch calls' tracing once it is on (absent, or answering `undefined`: none).
 */
export function storeCallsFor(
  store: IdempotencyStore,
  tracer: () => BatchCallTracer | undefined = () => undefined,
): StoreCalls {
  if (!handlesBatches(store)) return perKeyCalls(store);
  // A turn's claims in one `tryAcquireMany`, its completions in one `markCompleteMany`.
  const claims = new TurnBatch<BatchClaim, AcquireResult>(
    'tryAcquireMany',
    (entries) => acquireManyFrom(store, entries),
    ({ key, ttlMs, token }) => acquireFrom(store, key, ttlMs, token) as Promise<AcquireResult>,
    tracer,
  );
  const completions = new TurnBatch<BatchCompletion, boolean>(
    'markCompleteMany',
    (entries) => completeManyIn(store, entries),
    ({ key, ttlMs, token }) => completeIn(store, key, ttlMs, token),
    tracer,
  );
  return {
    acquire: (key, ttlMs, token) => claims.add({ key, ttlMs, token }),
    complete: (key, ttlMs, token) => completions.add({ key, ttlMs, token }),
  };
}

/**
 * The most entries one batch call carries, and the count at which it leaves before the turn ends:
 * two SQS batches' worth, so the first call's round trip overlaps the decoding of the records after
 * it (33-37% more first sightings a second than one call at the turn's end, `bench/PROFILE.md`).
 */
export const MAX_BATCH_ENTRIES = 20;

/** One turn's entries of one method; parallel arrays, not an object per entry: this runs twice per record. */
class TurnBatch<Entry, Answer> {
  private entries: Entry[] = [];
  private resolves: Array<(answer: Answer) => void> = [];
  private rejects: Array<(error: unknown) => void> = [];
  /** The records' spans, where the batch calls are traced (then index for index with the entries). */
  private origins: unknown[] = [];
  private tracing: BatchCallTracer | undefined = undefined;
  private scheduled = false;

  constructor(
    private readonly method: string,
    private readonly sendMany: (entries: Entry[]) => Promise<Array<Answer | StoreProtocolError>>,
    private readonly sendOne: (entry: Entry) => Promise<Answer>,
    private readonly tracer: () => BatchCallTracer | undefined,
  ) {}

  add(entry: Entry): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      this.entries.push(entry);
      this.resolves.push(resolve);
      this.rejects.push(reject);
      const tracing = this.tracer();
      if (tracing !== undefined) {
        this.tracing = tracing;
        this.origins.push(tracing.origin());
      }
      if (this.entries.length >= MAX_BATCH_ENTRIES) {
        this.flush();
      } else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flushAtTurnEnd);
      }
    });
  }

  private readonly flushAtTurnEnd = (): void => {
    this.scheduled = false;
    this.flush();
  };

  private flush(): void {
    const { entries, resolves, rejects, origins, tracing } = this;
    if (entries.length === 0) return;
    this.entries = [];
    this.resolves = [];
    this.rejects = [];
    if (tracing !== undefined) {
      this.origins = [];
      this.tracing = undefined;
    }
    if (entries.length === 1) {
      this.sendOne(entries[0]).then(resolves[0], rejects[0]);
      return;
    }
    // Traced: under a span of its own, linked to the records, not in the context of the one that scheduled it.
    const sent =
      tracing === undefined
        ? this.sendMany(entries)
        : tracing.run(this.method, origins, () => this.sendMany(entries));
    sent.then(
      (answers) => {
        for (let i = 0; i < answers.length; i++) {
          const answer = answers[i];
          if (answer instanceof StoreProtocolError) rejects[i](answer);
          else resolves[i](answer);
        }
      },
      (error: unknown) => {
        for (const reject of rejects) reject(error);
      },
    );
  }
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
