import { setImmediate } from 'node:timers';
import {
  AcquireResult,
  BatchClaim,
  BatchCompletion,
  handlesBatches,
  IdempotencyStore,
} from '../stores/idempotency-store.interface';
import { InMemoryIdempotencyStore } from '../stores/in-memory/in-memory-idempotency.store';
import { acquireFrom, acquireManyFrom, completeIn, completeManyIn, StoreProtocolError } from './store-calls';

/**
 * The claims and completions `IdempotencyService` sends a store, per key or a tick's worth at a time.
 *
 * The records of a batch run side by side through the pipeline, so their claims are asked for
 * within one turn of the event loop, and (no-op or equally quick handlers) so are their
 * completions. On a store with both batch methods (`tryAcquireMany`, `markCompleteMany`) the
 * claims asked for in one turn go out as `tryAcquireMany` calls, and the completions as
 * `markCompleteMany` calls: on Redis one script call for up to `MAX_BATCH_ENTRIES` records, so one
 * command and one reply to parse for them instead of one per record. A call goes out as soon as it
 * holds `MAX_BATCH_ENTRIES` entries, while the turn goes on, and the rest when the turn ends: a
 * 10-record Lambda batch is one call, and where more records are in flight (several batches, a
 * larger batch size) the store works on the first ones while this process is still decoding the
 * others. Each record still gets its own answer, with its own key, lease and token: fencing is the
 * store's, per key, as with the single calls. A lone call goes out as the single method (`SET NX`
 * is cheaper than a script for one key).
 *
 * What stays per key: claims with a payload fingerprint (no batch form), releases after a failure
 * (`forget`), lease renewals (`extend`), transactional runs, every call into a store without
 * both batch methods (DynamoDB, Postgres, users' stores), and the in-memory store's (no round trip).
 *
 * Nothing is claimed ahead of a record: a claim is only sent for a record the batch rules are
 * running, so a FIFO group that halts leaves its later records unclaimed.
 *
 * Guarded as the single calls are (`store-calls.ts`): a batch call that throws, rejects, returns no
 * promise or answers something other than one answer per entry fails every record of the batch as
 * a failing single call fails one (a store error, `onStoreError`); one answer outside the protocol
 * fails its record alone.
 *
 * The end of the turn is `setImmediate` from `node:timers`, which a test's fake timers
 * (`jest.useFakeTimers()`, installed on the global object) leave real: claims never wait on a
 * clock the test has stopped.
 */
export interface StoreCalls {
  /** `tryAcquire(key, ttlMs, token)`, checked: an `AcquireResult`, or a rejection (a store error). */
  acquire(key: string, ttlMs: number, token: string): Promise<AcquireResult>;
  /** `markComplete(key, ttlMs, token)`, checked: whether the claim was still owned, or a rejection. */
  complete(key: string, ttlMs: number, token: string): Promise<boolean>;
}

/**
 * How `IdempotencyService` calls `store`: in batches when it has both batch methods, else per key.
 * `InMemoryIdempotencyStore` is called per key although it has them: its calls are map operations in
 * this process, so a batch saves no round trip, and waiting for the turn to end cost more than the
 * claim itself (about 6 of 20 CPU µs a record in the whole-batch bench).
 */
export function storeCallsFor(store: IdempotencyStore): StoreCalls {
  return handlesBatches(store) && !(store instanceof InMemoryIdempotencyStore)
    ? new StoreCallBatcher(store)
    : new PerKeyStoreCalls(store);
}

/**
 * The most entries one batch call carries, and the count at which it goes out without waiting for
 * the turn to end. Two SQS batches' worth: in the whole-batch bench (8 invocations of 10 records in
 * flight on one process, Redis), sending calls of 20 as they filled instead of one call of 80 at the
 * end of the turn ran 33% and 37% more first sightings a second and 5% and 17% more duplicates, for
 * up to 18% more CPU a record (paired in one process; 10, 32 and 40 measured alike, `bench/PROFILE.md`):
 * the round trip of the first call overlaps the decoding of the records after it.
 */
export const MAX_BATCH_ENTRIES = 20;

/** Every call its own round trip (a store without both batch methods). */
class PerKeyStoreCalls implements StoreCalls {
  constructor(private readonly store: IdempotencyStore) {}

  acquire(key: string, ttlMs: number, token: string): Promise<AcquireResult> {
    return acquireFrom(this.store, key, ttlMs, token);
  }

  complete(key: string, ttlMs: number, token: string): Promise<boolean> {
    return completeIn(this.store, key, ttlMs, token);
  }
}

/** A turn's claims in one `tryAcquireMany`, its completions in one `markCompleteMany`. */
export class StoreCallBatcher implements StoreCalls {
  private readonly claims: TurnBatch<BatchClaim, AcquireResult>;
  private readonly completions: TurnBatch<BatchCompletion, boolean>;

  constructor(store: IdempotencyStore) {
    this.claims = new TurnBatch(
      (entries) => acquireManyFrom(store, entries),
      ({ key, ttlMs, token }) => acquireFrom(store, key, ttlMs, token),
    );
    this.completions = new TurnBatch(
      (entries) => completeManyIn(store, entries),
      ({ key, ttlMs, token }) => completeIn(store, key, ttlMs, token),
    );
  }

  acquire(key: string, ttlMs: number, token: string): Promise<AcquireResult> {
    return this.claims.add({ key, ttlMs, token });
  }

  complete(key: string, ttlMs: number, token: string): Promise<boolean> {
    return this.completions.add({ key, ttlMs, token });
  }
}

/**
 * Entries gathered during one turn of the event loop, sent once `MAX_BATCH_ENTRIES` are waiting, the
 * rest when the turn ends. Parallel arrays rather than an object per entry: this runs twice per
 * record.
 */
class TurnBatch<Entry, Answer> {
  private entries: Entry[] = [];
  private resolves: Array<(answer: Answer) => void> = [];
  private rejects: Array<(error: unknown) => void> = [];
  private scheduled = false;

  constructor(
    private readonly sendMany: (entries: Entry[]) => Promise<Array<Answer | StoreProtocolError>>,
    private readonly sendOne: (entry: Entry) => Promise<Answer>,
  ) {}

  add(entry: Entry): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      this.entries.push(entry);
      this.resolves.push(resolve);
      this.rejects.push(reject);
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
    const { entries, resolves, rejects } = this;
    if (entries.length === 0) return;
    this.entries = [];
    this.resolves = [];
    this.rejects = [];
    if (entries.length === 1) {
      this.sendOne(entries[0]).then(resolves[0], rejects[0]);
      return;
    }
    this.sendMany(entries).then(
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
