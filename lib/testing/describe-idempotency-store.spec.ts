import {
  AcquireAnswer,
  AcquireResult,
  BatchClaim,
  BatchCompletion,
  FingerprintClaim,
  IdempotencyKeyInspection,
  IdempotencyStore,
} from '../stores/idempotency-store.interface';
import { InMemoryIdempotencyStore } from '../stores/in-memory/in-memory-idempotency.store';
import type {
  DescribeIdempotencyStoreOptions,
  IdempotencyStoreFactory,
  StoreConformanceRunner,
} from './kit-case-context';
import { describeIdempotencyStore } from './describe-idempotency-store';

/**
 * The kit must catch the mistakes real stores make. Each flawed store below has one of them; the
 * kit runs against it through a runner that only collects the cases (the kit's `runner` option),
 * and the cases that must catch the flaw have to fail.
 */

type Flaw =
  | 'racy'
  | 'unfenced'
  | 'immortal'
  | 'floorsTtl'
  | 'keepsLease'
  | 'resurrects'
  | 'syncAnswers'
  | 'looseAnswers'
  | 'inspectClaims'
  | 'inspectExtends'
  | 'inspectIgnoresExpiry'
  | 'inspectTotalTtl'
  | 'noFingerprints'
  | 'echoesFingerprint'
  | 'dropsFingerprintOnCompletion'
  | 'keepsStaleFingerprint'
  | 'noBatches'
  | 'batchRacy'
  | 'batchMisordered'
  | 'batchUnfenced'
  | 'none';

/** A map store on a fake clock, with one deliberate flaw. */
class FlawedStore implements IdempotencyStore {
  private readonly entries = new Map<string, { token: string; completed: boolean; expiresAt: number }>();
  private readonly fingerprints = new Map<string, FingerprintClaim>();
  now = 0;
  readonly keepsFingerprints: boolean;
  tryAcquireMany?: (claims: readonly BatchClaim[]) => Promise<AcquireResult[]>;
  markCompleteMany?: (completions: readonly BatchCompletion[]) => Promise<boolean[]>;

  constructor(private readonly flaw: Flaw) {
    this.keepsFingerprints = flaw !== 'noFingerprints';
    if (flaw !== 'noBatches') {
      this.tryAcquireMany = this.claimMany.bind(this);
      this.markCompleteMany = this.completeMany.bind(this);
    }
  }

  private async claimMany(claims: readonly BatchClaim[]): Promise<AcquireResult[]> {
    if (this.flaw === 'batchRacy') {
      // Reads every key of the batch, then writes them all: overlapping batches both win a key.
      const held = claims.map(({ key }) => this.live(key));
      await Promise.resolve();
      return claims.map(({ key, ttlMs, token }, i) => {
        if (held[i]) return held[i].completed ? AcquireResult.COMPLETED : AcquireResult.IN_PROGRESS;
        this.entries.set(key, { token, completed: false, expiresAt: this.expiry(ttlMs) });
        return AcquireResult.ACQUIRED;
      });
    }
    const answers: AcquireResult[] = [];
    for (const { key, ttlMs, token } of claims) answers.push(await this.tryAcquire(key, ttlMs, token));
    // Answers grouped their own way (say, by server) and not put back in the batch's order.
    return this.flaw === 'batchMisordered' ? answers.reverse() : answers;
  }

  private async completeMany(completions: readonly BatchCompletion[]): Promise<boolean[]> {
    const answers: boolean[] = [];
    for (const { key, ttlMs, token } of completions) {
      if (this.flaw !== 'batchUnfenced') answers.push(await this.complete(key, ttlMs, token));
      else {
        // A bulk write (MSET, a multi-row upsert) that skips the token check.
        this.entries.set(key, { token, completed: true, expiresAt: this.expiry(ttlMs) });
        answers.push(true);
      }
    }
    return answers;
  }

  tryAcquire(key: string, ttlMs: number, token: string): Promise<AcquireResult>;
  tryAcquire(key: string, ttlMs: number, token: string, claim?: FingerprintClaim): Promise<AcquireAnswer>;
  async tryAcquire(key: string, ttlMs: number, token: string, claim?: FingerprintClaim) {
    const entry = this.live(key);
    // Read, then write after an await: the classic check-then-set race.
    if (this.flaw === 'racy') await Promise.resolve();
    let result: AcquireResult;
    if (entry) result = entry.completed ? AcquireResult.COMPLETED : AcquireResult.IN_PROGRESS;
    else {
      this.entries.set(key, { token, completed: false, expiresAt: this.expiry(ttlMs) });
      // An expired claim's fingerprint must go with it.
      if (this.flaw !== 'keepsStaleFingerprint') this.fingerprints.delete(key);
      result = AcquireResult.ACQUIRED;
    }
    if (!claim || this.flaw === 'noFingerprints') return result;
    if (result === AcquireResult.ACQUIRED) this.fingerprints.set(key, claim);
    // Answering the caller's own fingerprint makes every copy look like the same payload.
    const kept = this.flaw === 'echoesFingerprint' ? claim : this.fingerprints.get(key);
    return result === AcquireResult.ACQUIRED || kept === undefined ? result : { result, ...kept };
  }

  async markComplete(key: string, ttlMs: number, token: string): Promise<boolean> {
    // "OK" for done, as a hand-written SQL or HTTP store might answer.
    if (this.flaw === 'looseAnswers') return (await this.complete(key, ttlMs, token)) && ('OK' as never);
    return this.complete(key, ttlMs, token);
  }

  private async complete(key: string, ttlMs: number, token: string): Promise<boolean> {
    const entry = this.live(key);
    if (entry && this.flaw !== 'unfenced' && (entry.token !== token || entry.completed)) return false;
    const expiresAt = this.flaw === 'keepsLease' && entry ? entry.expiresAt : this.expiry(ttlMs);
    if (this.flaw === 'dropsFingerprintOnCompletion' || this.entries.get(key)?.token !== token) {
      this.fingerprints.delete(key);
    }
    this.entries.set(key, { token, completed: true, expiresAt });
    return true;
  }

  forget(key: string, token: string): Promise<boolean> {
    // A synchronous answer where a promise is due.
    if (this.flaw === 'syncAnswers') return this.release(key, token) as never;
    return Promise.resolve(this.release(key, token));
  }

  private release(key: string, token: string): boolean {
    const entry = this.live(key);
    if (entry && this.flaw !== 'unfenced' && (entry.token !== token || entry.completed)) return false;
    this.entries.delete(key);
    return true;
  }

  async extend(key: string, ttlMs: number, token: string): Promise<boolean> {
    const entry = this.flaw === 'resurrects' ? this.entries.get(key) : this.live(key);
    if (!entry || entry.completed || (this.flaw !== 'unfenced' && entry.token !== token)) return false;
    entry.expiresAt = this.expiry(ttlMs);
    return true;
  }

  async inspect(key: string): Promise<IdempotencyKeyInspection> {
    // A lookup that "helpfully" claims what it does not find.
    if (this.flaw === 'inspectClaims' && !this.live(key)) await this.tryAcquire(key, 60_000, 'inspector');
    const entry = this.flaw === 'inspectIgnoresExpiry' ? this.entries.get(key) : this.live(key);
    if (!entry) return { state: 'UNKNOWN' };
    // A lookup that refreshes what it reads (a GETEX, a touch).
    if (this.flaw === 'inspectExtends' && !entry.completed) entry.expiresAt = this.now + 60_000;
    const left = entry.expiresAt === Infinity ? undefined : entry.expiresAt - this.now;
    // The whole TTL instead of what is left of it.
    const shown = this.flaw === 'inspectTotalTtl' && left !== undefined ? left * 1_000 : left;
    if (entry.completed)
      return shown === undefined ? { state: 'COMPLETED' } : { state: 'COMPLETED', expiresInMs: shown };
    return shown === undefined ? { state: 'IN_PROGRESS' } : { state: 'IN_PROGRESS', leaseLeftMs: shown };
  }

  private live(key: string) {
    const entry = this.entries.get(key);
    return entry && entry.expiresAt > this.now ? entry : undefined;
  }

  private expiry(ttlMs: number): number {
    // Whole milliseconds rounded down, 0 meaning "no expiry": Redis's PX 0 after a Math.floor.
    if (this.flaw === 'floorsTtl') return Math.floor(ttlMs) === 0 ? Infinity : this.now + Math.floor(ttlMs);
    return this.flaw === 'immortal' ? Infinity : this.now + ttlMs;
  }
}

interface CollectedCase {
  name: string;
  body: () => Promise<void>;
  frames: Frame[];
}
interface Frame {
  name: string;
  before: Array<() => Promise<void>>;
  after: Array<() => Promise<void>>;
}

/** Registers the kit with a runner that records its cases, then runs them; returns the failures. */
async function failuresOf(
  factory: IdempotencyStoreFactory,
  options: DescribeIdempotencyStoreOptions = {},
): Promise<string[]> {
  const cases: CollectedCase[] = [];
  const stack: Frame[] = [{ name: '', before: [], after: [] }];
  const runner: StoreConformanceRunner = {
    describe: (name, body) => {
      stack.push({ name, before: [], after: [] });
      body();
      stack.pop();
    },
    it: (name, body) => {
      cases.push({
        name: [...stack.slice(2).map((frame) => frame.name), name].join(' › '),
        body,
        frames: [...stack],
      });
    },
    beforeEach: (body) => void stack.at(-1)!.before.push(body),
    afterEach: (body) => void stack.at(-1)!.after.push(body),
  };
  describeIdempotencyStore('store', factory, { runner, concurrency: 20, ...options });

  const failures: string[] = [];
  for (const testCase of cases) {
    try {
      for (const frame of testCase.frames) for (const hook of frame.before) await hook();
      await testCase.body();
    } catch {
      failures.push(testCase.name);
    } finally {
      for (const frame of [...testCase.frames].reverse()) for (const hook of frame.after) await hook();
    }
  }
  expect(cases.length).toBeGreaterThan(15);
  return failures;
}

const flawed = (flaw: Flaw) => () => {
  const store = new FlawedStore(flaw);
  return { store, advanceTime: (ms: number) => void (store.now += ms) };
};

describe('describeIdempotencyStore', () => {
  it('passes a correct store', async () => {
    expect(await failuresOf(flawed('none'))).toEqual([]);
    let now = 0;
    expect(
      await failuresOf(
        () => ({
          store: new InMemoryIdempotencyStore({ clock: () => now }),
          advanceTime: (ms) => void (now += ms),
        }),
        { batches: false },
      ),
    ).toEqual([]);
  });

  it('in real time, runs a case again with a longer TTL when the machine paused it past its lease', async () => {
    // The store is right, but each case's first completion returns only after the 20 ms TTL it
    // wrote has run out, as on a loaded machine: those cases see their key expire too early.
    let pausedCases = 0;
    class PausedOnceStore extends InMemoryIdempotencyStore {
      paused = false;
      override async markComplete(key: string, ttlMs: number, token: string): Promise<boolean> {
        const kept = await super.markComplete(key, ttlMs, token);
        if (!this.paused && ttlMs <= 20) {
          this.paused = true;
          pausedCases++;
          await new Promise((resolve) => setTimeout(resolve, 3 * ttlMs));
        }
        return kept;
      }
    }
    expect(await failuresOf(() => new PausedOnceStore(), { shortTtlMs: 20, batches: false })).toEqual([]);
    expect(pausedCases).toBeGreaterThan(0);
  });

  it('in real time, still catches a wrong store whatever the TTL', async () => {
    class ForgetsNothingStore extends InMemoryIdempotencyStore {
      override markComplete(key: string, _ttlMs: number, token: string): Promise<boolean> {
        return super.markComplete(key, Infinity, token);
      }
    }
    expect(await failuresOf(() => new ForgetsNothingStore(), { shortTtlMs: 20 })).toEqual(
      expect.arrayContaining(['expiry › remembers a completed key for ttl, then forgets it']),
    );
  });

  it('catches a check-then-set race in tryAcquire', async () => {
    expect(await failuresOf(flawed('racy'))).toEqual([
      'atomicity › gives ACQUIRED to exactly one of 20 concurrent claimers of one key',
      'payload fingerprints (tryAcquire with a claim) › gives ACQUIRED to exactly one of 20 concurrent claimers, and the others its fingerprint',
      'batches (tryAcquireMany, markCompleteMany) › gives each key to exactly one of 20 concurrent batches over the same keys',
    ]);
  });

  it('catches writes that ignore the token (no fencing)', async () => {
    expect(await failuresOf(flawed('unfenced'))).toEqual(
      expect.arrayContaining([
        'atomicity › gives ACQUIRED to exactly one of 20 concurrent claimers of one key',
        'fencing › keeps a stale owner from completing, releasing or extending the next owner’s claim',
        'fencing › keeps another attempt from completing or releasing a live claim',
        'fencing › never releases a completed key, not even for the attempt that completed it',
        'extend › answers false to another attempt and leaves the lease alone',
      ]),
    );
  });

  it('catches keys that never expire', async () => {
    expect(await failuresOf(flawed('immortal'))).toEqual(
      expect.arrayContaining([
        'fencing › keeps a stale owner from completing, releasing or extending the next owner’s claim',
        'expiry › remembers a completed key for ttl, then forgets it',
      ]),
    );
  });

  it('catches a sub-millisecond TTL rounded down to "no expiry"', async () => {
    expect(await failuresOf(flawed('floorsTtl'))).toEqual([
      'expiry › a sub-millisecond TTL still expires (rounded up, never to "no expiry")',
    ]);
  });

  it('catches a completion that keeps the lease as its expiry', async () => {
    expect(await failuresOf(flawed('keepsLease'))).toEqual(
      expect.arrayContaining([
        'expiry › replaces the lease with the ttl on completion',
        'expiry › remembers a key completed with ttl Infinity',
      ]),
    );
  });

  it('catches answers that are not promises, or not values of the protocol, in every case that gets one', async () => {
    // Every call is checked: a synchronous forget fails each case that releases, a markComplete
    // answering "OK" each case that completes.
    expect(await failuresOf(flawed('syncAnswers'))).toEqual(
      expect.arrayContaining([
        'fencing › keeps another attempt from completing or releasing a live claim',
        'forget › succeeds when there is nothing to release',
      ]),
    );
    expect(await failuresOf(flawed('looseAnswers'))).toEqual(
      expect.arrayContaining([
        'the three answers › answers ACQUIRED first, IN_PROGRESS while claimed, COMPLETED once completed',
        'expiry › remembers a completed key for ttl, then forgets it',
      ]),
    );
  });

  it('catches an extend that revives an expired lease', async () => {
    expect(await failuresOf(flawed('resurrects'))).toEqual(['extend › does not resurrect an expired lease']);
  });

  it('catches an inspect that writes: claims, or extends the lease it reads', async () => {
    expect(await failuresOf(flawed('inspectClaims'))).toContain(
      'inspect (read-only, for the key lookup) › answers UNKNOWN for a key never claimed, and claims nothing',
    );
    expect(await failuresOf(flawed('inspectExtends'))).toEqual([
      'inspect (read-only, for the key lookup) › answers IN_PROGRESS with the lease left, and never extends the lease',
    ]);
  });

  it('catches an inspect that reads expired entries or misstates the time left', async () => {
    expect(await failuresOf(flawed('inspectIgnoresExpiry'))).toEqual([
      'inspect (read-only, for the key lookup) › answers IN_PROGRESS with the lease left, and never extends the lease',
      'inspect (read-only, for the key lookup) › answers UNKNOWN for a released key and for one past its dedup window',
    ]);
    expect(await failuresOf(flawed('inspectTotalTtl'))).toEqual([
      'inspect (read-only, for the key lookup) › answers IN_PROGRESS with the lease left, and never extends the lease',
      'inspect (read-only, for the key lookup) › answers COMPLETED with the time left in the dedup window, none for ttl Infinity',
    ]);
  });

  it('asks a store without inspect to say so ({ inspect: false }), and then skips those cases', async () => {
    const withoutInspect = () => {
      const { store, advanceTime } = flawed('none')();
      const bare: IdempotencyStore = {
        // The three methods of the seeds' protocol (and extend): no claim, no keepsFingerprints.
        tryAcquire: (key: string, ttlMs: number, token: string) => store.tryAcquire(key, ttlMs, token),
        markComplete: (...args) => store.markComplete(...args),
        forget: (...args) => store.forget(...args),
        extend: (...args) => store.extend(...args),
      };
      return { store: bare, advanceTime };
    };
    const failures = await failuresOf(withoutInspect, { fingerprints: false, batches: false });
    expect(failures).toHaveLength(4);
    expect(failures.every((name) => name.startsWith('inspect (read-only, for the key lookup) › '))).toBe(
      true,
    );
    expect(await failuresOf(withoutInspect, { inspect: false, fingerprints: false, batches: false })).toEqual(
      [],
    );
  });

  const batchFingerprintCase =
    'batches (tryAcquireMany, markCompleteMany) › keeps a fingerprinted claim’s fingerprint through a batch completion';

  describe('payload fingerprints', () => {
    const fingerprintCase = (name: string) => `payload fingerprints (tryAcquire with a claim) › ${name}`;
    const all = [
      'answers with the fingerprint and message id the holding claim kept, in flight and once completed',
      'answers tryAcquire without a claim a bare result, and fences as for a claim without a fingerprint',
      'keeps a claim without a message id, and a message id holding spaces',
      'keeps the new claim’s fingerprint once the old lease or dedup window passed',
      'drops an expired claim’s fingerprint when the key is claimed again without one',
      'gives ACQUIRED to exactly one of 20 concurrent claimers, and the others its fingerprint',
    ].map(fingerprintCase);

    it('fails every fingerprint case of a store without them, unless told fingerprints: false', async () => {
      // And the batch case that completes a fingerprinted claim.
      expect(await failuresOf(flawed('noFingerprints'))).toEqual([...all, batchFingerprintCase]);
      expect(await failuresOf(flawed('noFingerprints'), { fingerprints: false })).toEqual([]);
    });

    it('catches a store that answers the caller’s fingerprint instead of the holder’s', async () => {
      expect(await failuresOf(flawed('echoesFingerprint'))).toEqual(
        expect.arrayContaining([all[0], all[2], all[3]]),
      );
    });

    it('catches a completion that drops the claim’s fingerprint', async () => {
      expect(await failuresOf(flawed('dropsFingerprintOnCompletion'))).toEqual([
        all[0],
        all[1],
        batchFingerprintCase,
      ]);
    });

    it('catches a fingerprint that outlives its claim', async () => {
      expect(await failuresOf(flawed('keepsStaleFingerprint'))).toEqual([all[4]]);
    });
  });

  describe('batches', () => {
    const batchCase = (name: string) => `batches (tryAcquireMany, markCompleteMany) › ${name}`;
    const all = [
      'answers each claim of a batch in order, as tryAcquire would, the winners owning their keys',
      'claims a key given twice in one batch once: the first entry wins',
      'gives each key to exactly one of 20 concurrent batches over the same keys',
      'keeps each claim’s own lease',
      'completes each key of a batch as markComplete would, fenced: never another attempt’s claim',
      'completes each key with its own ttl (Infinity too), replacing the lease; a key given twice once',
      'mixes with the single-key methods',
      'keeps a fingerprinted claim’s fingerprint through a batch completion',
    ].map(batchCase);

    it('fails every batch case of a store without batch methods, unless told batches: false', async () => {
      expect(await failuresOf(flawed('noBatches'))).toEqual(all);
      expect(await failuresOf(flawed('noBatches'), { batches: false })).toEqual([]);
    });

    it('catches a batch claim that reads every key before writing any', async () => {
      expect(await failuresOf(flawed('batchRacy'))).toEqual([all[1], all[2]]);
    });

    it('catches answers out of the batch’s order', async () => {
      expect(await failuresOf(flawed('batchMisordered'))).toEqual(expect.arrayContaining([all[0], all[1]]));
    });

    it('catches a batch completion that ignores the token', async () => {
      expect(await failuresOf(flawed('batchUnfenced'))).toEqual([all[4], all[5], all[7]]);
    });
  });

  it('says what the factory must return when it returns nothing (a missing return)', async () => {
    const hooks: Array<() => Promise<void>> = [];
    const runner: StoreConformanceRunner = {
      describe: (_name, body) => body(),
      it: () => undefined,
      beforeEach: (body) => void hooks.push(body),
      afterEach: () => undefined,
    };
    const returns: Array<[unknown, string]> = [
      [undefined, 'undefined (a missing return?)'],
      [null, 'null'],
      [42, '42'],
      [{ store: null }, 'an object with no tryAcquire method, nor a store with one'],
      [InMemoryIdempotencyStore, 'a function with no tryAcquire method, nor a store with one'],
    ];
    for (const [made, described] of returns) {
      hooks.length = 0;
      describeIdempotencyStore('store', () => made as IdempotencyStore, { runner });
      await expect(hooks[0]()).rejects.toThrow(
        'describeIdempotencyStore: the factory must return a store or { store, advanceTime?, peers?, dispose? }; ' +
          `it returned ${described}`,
      );
    }
  });

  it('says how to pass the runner when there are no globals', () => {
    const saved = (globalThis as { describe?: unknown }).describe;
    (globalThis as { describe?: unknown }).describe = undefined;
    try {
      expect(() => describeIdempotencyStore('x', () => new InMemoryIdempotencyStore())).toThrow(
        /no global describe.*\{ runner: \{ describe, it, beforeEach, afterEach \} \}/,
      );
    } finally {
      (globalThis as { describe?: unknown }).describe = saved;
    }
  });
});
