import { AcquireResult, IdempotencyStore } from '../stores/idempotency-store.interface';
import { acquireManyFrom, completeManyIn } from './store-call-batcher';
import { acquireFrom, completeIn, extendIn, forgetIn, inspectIn, StoreProtocolError } from './store-calls';
import { transactionIn } from './transactional-idempotency';

/**
 * A store is user code: these fakes answer what a user's store might, right or wrong, and the guards
 * must accept exactly the protocol's answers and turn everything else into one rejection with a
 * `StoreProtocolError` (the cause of the store error the record gets) that names the store method and
 * says what it should have answered.
 */
function storeWith(methods: Record<string, (...args: never[]) => unknown>): IdempotencyStore {
  return {
    shared: false,
    tryAcquire: () => Promise.resolve(AcquireResult.ACQUIRED),
    markComplete: () => Promise.resolve(true),
    forget: () => Promise.resolve(true),
    ...methods,
  } as unknown as IdempotencyStore;
}

/** A store whose `method` returns `value` as it is (not wrapped in a promise). */
const returning = (method: string, value: unknown) => storeWith({ [method]: () => value });
/** A store whose `method` resolves to `value`. */
const answering = (method: string, value: unknown) => storeWith({ [method]: () => Promise.resolve(value) });

/** The rejection of `promise`, checked to be a `StoreProtocolError`. */
async function protocolError(promise: Promise<unknown>): Promise<StoreProtocolError> {
  const error = await promise.then(
    (value) => {
      throw new Error(`resolved to ${String(value)}`);
    },
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(StoreProtocolError);
  return error as StoreProtocolError;
}
const messageOf = async (promise: Promise<unknown>) => (await protocolError(promise)).message;

const NOT_ACQUIRE_RESULT = 'not an AcquireResult (ACQUIRED, COMPLETED or IN_PROGRESS)';
const acquire = (store: IdempotencyStore) => acquireFrom(store, 'k', 1_000, 't');

describe('StoreProtocolError', () => {
  it('is an Error named StoreProtocolError (what a log of the store error’s cause shows)', () => {
    const error = new StoreProtocolError('m');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('StoreProtocolError');
    expect(String(error)).toBe('StoreProtocolError: m');
  });
});

describe('acquireFrom (tryAcquire)', () => {
  it.each(Object.values(AcquireResult))('accepts %s, passing the arguments through', async (result) => {
    const tryAcquire = jest.fn(() => Promise.resolve(result));
    await expect(acquireFrom(storeWith({ tryAcquire }), 'key', 1_234, 'token')).resolves.toBe(result);
    expect(tryAcquire).toHaveBeenCalledWith('key', 1_234, 'token');
  });

  it('accepts any thenable, not only a native promise', async () => {
    const thenable = { then: (resolve: (value: unknown) => void) => resolve(AcquireResult.COMPLETED) };
    await expect(acquire(returning('tryAcquire', thenable))).resolves.toBe(AcquireResult.COMPLETED);
  });

  it('passes a rejection through as it is (the store’s own error)', async () => {
    const down = new Error('connection refused');
    await expect(acquire(storeWith({ tryAcquire: () => Promise.reject(down) }))).rejects.toBe(down);
  });

  it('turns a synchronous throw into a rejection, not an exception', async () => {
    const exploded = new Error('exploded');
    const store = storeWith({
      tryAcquire: () => {
        throw exploded;
      },
    });
    let promise: Promise<unknown> | undefined;
    expect(() => (promise = acquire(store))).not.toThrow();
    await expect(promise).rejects.toBe(exploded);
  });

  it.each<[string, unknown, string]>([
    ['the bare answer', AcquireResult.ACQUIRED, '"ACQUIRED"'],
    ['undefined (a method that forgot to return)', undefined, 'undefined'],
    ['null', null, 'null'],
    ['a number', 42, '42'],
    ['a boolean', true, 'true'],
    ['a plain object', { result: 'ACQUIRED' }, 'the object {"result":"ACQUIRED"}'],
    ['an array', [AcquireResult.ACQUIRED], 'an array'],
    ['an object whose then is no function', { then: 'soon' }, 'the object {"then":"soon"}'],
  ])('refuses %s instead of a promise, naming tryAcquire', async (_, value, shown) => {
    expect(await messageOf(acquire(returning('tryAcquire', value)))).toBe(
      `tryAcquire returned ${shown} instead of a promise`,
    );
  });

  it.each<[string, unknown, string]>([
    ['a lower-case answer', 'acquired', '"acquired"'],
    ['undefined', undefined, 'undefined'],
    ['null', null, 'null'],
    ['true', true, 'true'],
    ['an object', { result: AcquireResult.ACQUIRED }, 'the object {"result":"ACQUIRED"}'],
    ['an array', [AcquireResult.ACQUIRED], 'an array'],
  ])('refuses %s as an answer, saying what it should be', async (_, value, shown) => {
    expect(await messageOf(acquire(answering('tryAcquire', value)))).toBe(
      `tryAcquire resolved to ${shown}, ${NOT_ACQUIRE_RESULT}`,
    );
  });
});

describe('describing an answer in the message', () => {
  const shown = async (value: unknown) =>
    (await messageOf(acquire(answering('tryAcquire', value)))).replace(`, ${NOT_ACQUIRE_RESULT}`, '');

  it('quotes a string of up to 40 characters whole, and cuts a longer one at 40 with an ellipsis', async () => {
    const forty = 'x'.repeat(40);
    expect(await shown(forty)).toBe(`tryAcquire resolved to "${forty}"`);
    expect(await shown(`${forty}TAIL`)).toBe(`tryAcquire resolved to "${forty}…"`);
  });

  it('shows at most 120 characters of an object’s JSON', async () => {
    const long = { value: 'y'.repeat(200) };
    expect(await shown(long)).toBe(`tryAcquire resolved to the object ${JSON.stringify(long).slice(0, 120)}`);
  });

  it('names an object JSON cannot show "an object" (and still rejects with a StoreProtocolError)', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(await shown(circular)).toBe('tryAcquire resolved to an object');
    expect(await shown({ count: BigInt(1) })).toBe('tryAcquire resolved to an object');
  });

  it('names a function rather than printing its source', async () => {
    function answerLater(): void {}
    expect(await shown(answerLater)).toBe('tryAcquire resolved to a function (answerLater)');
    expect(await shown(Object.defineProperty(() => 1, 'name', { value: '' }))).toBe(
      'tryAcquire resolved to a function',
    );
  });

  it('shows other primitives as String does', async () => {
    expect(await shown(BigInt(7))).toBe('tryAcquire resolved to 7');
    expect(await shown(Symbol('s'))).toBe('tryAcquire resolved to Symbol(s)');
    expect(await shown(Number.NaN)).toBe('tryAcquire resolved to NaN');
  });
});

describe('acquireFrom with a claim (payload fingerprints)', () => {
  const claim = { fingerprint: 'fp', messageId: 'm-1' };
  const acquireWithClaim = (store: IdempotencyStore) => acquireFrom(store, 'k', 1_000, 't', claim);
  const SHAPE = `${NOT_ACQUIRE_RESULT} or { result, fingerprint?: string, messageId?: string }`;

  it.each<[string, unknown]>([
    ['a bare result (nothing kept, or the claim won)', AcquireResult.ACQUIRED],
    ['a result alone', { result: AcquireResult.ACQUIRED }],
    [
      'a result with the kept fingerprint and message id',
      { result: AcquireResult.COMPLETED, fingerprint: 'f', messageId: 'm' },
    ],
    [
      'null fingerprint and message id (a database’s empty columns)',
      { result: AcquireResult.IN_PROGRESS, fingerprint: null, messageId: null },
    ],
    ['a fingerprint without a message id', { result: AcquireResult.IN_PROGRESS, fingerprint: 'f' }],
    ['a message id without a fingerprint', { result: AcquireResult.COMPLETED, messageId: 'm' }],
  ])('accepts %s, passing the claim through', async (_, answer) => {
    const tryAcquire = jest.fn(() => Promise.resolve(answer));
    await expect(acquireFrom(storeWith({ tryAcquire }), 'key', 1_234, 'token', claim)).resolves.toBe(answer);
    expect(tryAcquire).toHaveBeenCalledWith('key', 1_234, 'token', claim);
  });

  it('passes no claim without one: a three-method store is called with three arguments', async () => {
    const tryAcquire = jest.fn(() => Promise.resolve(AcquireResult.ACQUIRED));
    await acquireFrom(storeWith({ tryAcquire }), 'key', 1_234, 'token');
    expect(tryAcquire.mock.calls).toEqual([['key', 1_234, 'token']]);
  });

  it.each<[string, unknown, string]>([
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
    ['an object without a result', { fingerprint: 'f' }, 'the object {"fingerprint":"f"}'],
    ['an unknown result', { result: 'OK' }, 'the object {"result":"OK"}'],
    [
      'a fingerprint that is no string',
      { result: AcquireResult.COMPLETED, fingerprint: 5 },
      'the object {"result":"COMPLETED","fingerprint":5}',
    ],
    [
      'a message id that is no string',
      { result: AcquireResult.COMPLETED, fingerprint: 'f', messageId: 5 },
      'the object {"result":"COMPLETED","fingerprint":"f","messageId":5}',
    ],
    [
      'a message id that is no string, without a fingerprint',
      { result: AcquireResult.COMPLETED, messageId: {} },
      'the object {"result":"COMPLETED","messageId":{}}',
    ],
  ])('refuses %s, saying what it should be', async (_, value, shown) => {
    expect(await messageOf(acquireWithClaim(answering('tryAcquire', value)))).toBe(
      `tryAcquire resolved to ${shown}, ${SHAPE}`,
    );
  });

  it('refuses a plain value instead of a promise, naming tryAcquire', async () => {
    const value = { result: AcquireResult.ACQUIRED };
    expect(await messageOf(acquireWithClaim(returning('tryAcquire', value)))).toBe(
      'tryAcquire returned the object {"result":"ACQUIRED"} instead of a promise',
    );
  });
});

describe.each<[string, (store: IdempotencyStore) => Promise<boolean>, unknown[]]>([
  ['markComplete', (store) => completeIn(store, 'key', 1_234, 'token'), ['key', 1_234, 'token']],
  ['forget', (store) => forgetIn(store, 'key', 'token'), ['key', 'token']],
  ['extend', (store) => extendIn(store, 'key', 1_234, 'token'), ['key', 1_234, 'token']],
])('the ownership answer of %s', (method, call, args) => {
  it.each<[unknown, boolean]>([
    [true, true],
    [undefined, true],
    [false, false],
  ])('takes %s as owned: %s', async (answer, owned) => {
    const fake = jest.fn(() => Promise.resolve(answer));
    await expect(call(storeWith({ [method]: fake }))).resolves.toBe(owned);
    expect(fake).toHaveBeenCalledWith(...args);
  });

  it.each<[unknown, string]>([
    ['yes', '"yes"'],
    [null, 'null'],
    [1, '1'],
    [0, '0'],
    [{ ok: true }, 'the object {"ok":true}'],
  ])('refuses %s, naming the method and the answers it may give', async (answer, shown) => {
    expect(await messageOf(call(answering(method, answer)))).toBe(
      `${method} resolved to ${shown}, not true, false or undefined`,
    );
  });

  it('refuses a plain value instead of a promise', async () => {
    expect(await messageOf(call(returning(method, true)))).toBe(
      `${method} returned true instead of a promise`,
    );
  });

  it('turns a synchronous throw into a rejection', async () => {
    const exploded = new Error('exploded');
    const store = storeWith({
      [method]: () => {
        throw exploded;
      },
    });
    let promise: Promise<unknown> | undefined;
    expect(() => (promise = call(store))).not.toThrow();
    await expect(promise).rejects.toBe(exploded);
  });
});

describe('acquireManyFrom (tryAcquireMany)', () => {
  const claims = [
    { key: 'a', ttlMs: 1_000, token: 't1' },
    { key: 'b', ttlMs: 1_000, token: 't2' },
    { key: 'c', ttlMs: 1_000, token: 't3' },
  ];

  it('answers each claim in order, passing the claims through', async () => {
    const answers = [AcquireResult.ACQUIRED, AcquireResult.COMPLETED, AcquireResult.IN_PROGRESS];
    const tryAcquireMany = jest.fn(() => Promise.resolve(answers));
    await expect(acquireManyFrom(storeWith({ tryAcquireMany }), claims)).resolves.toEqual(answers);
    expect(tryAcquireMany).toHaveBeenCalledWith(claims);
  });

  it('fails only the claim answered outside the protocol, naming its key, and leaves the store’s array alone', async () => {
    const answers = [AcquireResult.ACQUIRED, 'OK', AcquireResult.IN_PROGRESS];
    const got = await acquireManyFrom(answering('tryAcquireMany', answers), claims);
    expect(got[0]).toBe(AcquireResult.ACQUIRED);
    expect(got[1]).toBeInstanceOf(StoreProtocolError);
    expect((got[1] as StoreProtocolError).message).toBe(
      `tryAcquireMany answered "OK" for "b", ${NOT_ACQUIRE_RESULT}`,
    );
    expect(got[2]).toBe(AcquireResult.IN_PROGRESS);
    expect(answers).toEqual([AcquireResult.ACQUIRED, 'OK', AcquireResult.IN_PROGRESS]);
  });

  it('checks the last answer too', async () => {
    const got = await acquireManyFrom(
      answering('tryAcquireMany', [AcquireResult.ACQUIRED, AcquireResult.ACQUIRED, undefined]),
      claims,
    );
    expect((got[2] as StoreProtocolError).message).toBe(
      `tryAcquireMany answered undefined for "c", ${NOT_ACQUIRE_RESULT}`,
    );
  });

  it.each<[string, unknown, string]>([
    ['too few answers', [AcquireResult.ACQUIRED, AcquireResult.ACQUIRED], '2 answers'],
    ['too many answers', [...claims, 'extra'].map(() => AcquireResult.ACQUIRED), '4 answers'],
    ['no answers', [], '0 answers'],
    ['no array', { 0: AcquireResult.ACQUIRED, length: 3 }, 'the object {"0":"ACQUIRED","length":3}'],
    ['undefined', undefined, 'undefined'],
  ])('fails the whole batch for %s', async (_, value, shown) => {
    expect(await messageOf(acquireManyFrom(answering('tryAcquireMany', value), claims))).toBe(
      `tryAcquireMany resolved to ${shown} for a batch of 3, not an array of 3 answers in order`,
    );
  });

  it('refuses a plain array instead of a promise', async () => {
    expect(await messageOf(acquireManyFrom(returning('tryAcquireMany', []), claims))).toBe(
      'tryAcquireMany returned an array instead of a promise',
    );
  });
});

describe('completeManyIn (markCompleteMany)', () => {
  const completions = [
    { key: 'a', ttlMs: 5_000, token: 't1' },
    { key: 'b', ttlMs: 5_000, token: 't2' },
  ];

  it('answers each completion in order, true or false, passing the completions through', async () => {
    const markCompleteMany = jest.fn(() => Promise.resolve([false, true]));
    await expect(completeManyIn(storeWith({ markCompleteMany }), completions)).resolves.toEqual([
      false,
      true,
    ]);
    expect(markCompleteMany).toHaveBeenCalledWith(completions);
  });

  it.each<[unknown, string]>([
    [undefined, 'undefined'],
    [1, '1'],
    ['true', '"true"'],
    [null, 'null'],
  ])(
    'fails only the completion answered %s (no undefined here: a batch answers each key)',
    async (value, shown) => {
      const answers = [true, value];
      const got = await completeManyIn(answering('markCompleteMany', answers), completions);
      expect(got[0]).toBe(true);
      expect(got[1]).toBeInstanceOf(StoreProtocolError);
      expect((got[1] as StoreProtocolError).message).toBe(
        `markCompleteMany answered ${shown} for "b", not true or false`,
      );
      expect(answers).toEqual([true, value]);
    },
  );

  it('fails the whole batch for an answer of the wrong length, naming markCompleteMany', async () => {
    expect(await messageOf(completeManyIn(answering('markCompleteMany', [true]), completions))).toBe(
      'markCompleteMany resolved to 1 answers for a batch of 2, not an array of 2 answers in order',
    );
    expect(await messageOf(completeManyIn(returning('markCompleteMany', [true, true]), completions))).toBe(
      'markCompleteMany returned an array instead of a promise',
    );
  });
});

describe('inspectIn (inspect)', () => {
  const inspect = (value: unknown) => inspectIn(answering('inspect', value), 'key');

  it('asks for the key', async () => {
    const fake = jest.fn(() => Promise.resolve({ state: 'UNKNOWN' }));
    await inspectIn(storeWith({ inspect: fake }), 'the-key');
    expect(fake).toHaveBeenCalledWith('the-key');
  });

  it.each<[unknown, object]>([
    [{ state: 'UNKNOWN' }, { state: 'UNKNOWN' }],
    [{ state: 'UNKNOWN', leaseLeftMs: 5, expiresInMs: 6 }, { state: 'UNKNOWN' }],
    [{ state: 'COMPLETED' }, { state: 'COMPLETED' }],
    [
      { state: 'COMPLETED', expiresInMs: 5_000 },
      { state: 'COMPLETED', expiresInMs: 5_000 },
    ],
    [
      { state: 'COMPLETED', expiresInMs: 0 },
      { state: 'COMPLETED', expiresInMs: 0 },
    ],
    [
      { state: 'COMPLETED', expiresInMs: 7, leaseLeftMs: 3, extra: 'x' },
      { state: 'COMPLETED', expiresInMs: 7 },
    ],
    [{ state: 'IN_PROGRESS' }, { state: 'IN_PROGRESS' }],
    [
      { state: 'IN_PROGRESS', leaseLeftMs: 300 },
      { state: 'IN_PROGRESS', leaseLeftMs: 300 },
    ],
    [
      { state: 'IN_PROGRESS', leaseLeftMs: 0 },
      { state: 'IN_PROGRESS', leaseLeftMs: 0 },
    ],
    [
      { state: 'IN_PROGRESS', leaseLeftMs: 9, expiresInMs: 3 },
      { state: 'IN_PROGRESS', leaseLeftMs: 9 },
    ],
  ])('reads %j as only the fields its state allows: %j', async (answer, inspection) => {
    const got = await inspect(answer);
    expect(got).toStrictEqual(inspection);
    expect(got).not.toBe(answer);
  });

  it.each<[object, string]>([
    [{ state: 'COMPLETED', expiresInMs: -1 }, 'expiresInMs -1'],
    [{ state: 'COMPLETED', expiresInMs: '5' }, 'expiresInMs "5"'],
    [{ state: 'COMPLETED', expiresInMs: null }, 'expiresInMs null'],
    [{ state: 'COMPLETED', expiresInMs: Number.NaN }, 'expiresInMs NaN'],
    [{ state: 'IN_PROGRESS', leaseLeftMs: -0.5 }, 'leaseLeftMs -0.5'],
    [{ state: 'IN_PROGRESS', leaseLeftMs: {} }, 'leaseLeftMs the object {}'],
  ])('refuses %j: %s is not a number of ms >= 0', async (answer, shown) => {
    expect(await messageOf(inspect(answer))).toBe(`inspect answered ${shown}, not a number of ms >= 0`);
  });

  it.each<[unknown, string]>([
    [{ state: 'completed' }, 'the object {"state":"completed"}'],
    [{}, 'the object {}'],
    [null, 'null'],
    [undefined, 'undefined'],
    ['COMPLETED', '"COMPLETED"'],
  ])('refuses %j, saying what it should be', async (answer, shown) => {
    expect(await messageOf(inspect(answer))).toBe(
      `inspect resolved to ${shown}, not { state: 'COMPLETED' | 'IN_PROGRESS' | 'UNKNOWN' }`,
    );
  });

  it('refuses a plain value instead of a promise', async () => {
    expect(await messageOf(inspectIn(returning('inspect', { state: 'UNKNOWN' }), 'key'))).toBe(
      'inspect returned the object {"state":"UNKNOWN"} instead of a promise',
    );
  });
});

describe('transactionIn (runInTransaction)', () => {
  const claim = { key: 'k', ttlMs: 1_000, token: 't', idleTimeoutMs: 500 };
  const run = () => Promise.resolve('done');
  const SHAPE = '{ answer: ACQUIRED | COMPLETED | IN_PROGRESS }';

  it.each<[object]>([
    [{ answer: AcquireResult.ACQUIRED, result: 'done' }],
    [{ answer: AcquireResult.COMPLETED }],
    [{ answer: AcquireResult.IN_PROGRESS }],
  ])('accepts %j as it is, passing the claim and the run through', async (answer) => {
    const runInTransaction = jest.fn(() => Promise.resolve(answer));
    await expect(transactionIn(storeWith({ runInTransaction }), claim, run)).resolves.toBe(answer);
    expect(runInTransaction).toHaveBeenCalledWith(claim, run);
  });

  it('rejects with run’s own error when run failed', async () => {
    const failed = new Error('handler failed');
    const store = storeWith({
      runInTransaction: (_: unknown, body: (transaction: unknown) => Promise<unknown>) => body({}),
    });
    await expect(transactionIn(store, undefined, () => Promise.reject(failed))).rejects.toBe(failed);
  });

  it.each<[unknown, string]>([
    [null, 'null'],
    [undefined, 'undefined'],
    [AcquireResult.ACQUIRED, '"ACQUIRED"'],
    [{ answer: 'OK' }, 'the object {"answer":"OK"}'],
    [{ result: 'done' }, 'the object {"result":"done"}'],
  ])('refuses %j, saying what it should be', async (answer, shown) => {
    expect(await messageOf(transactionIn(answering('runInTransaction', answer), claim, run))).toBe(
      `runInTransaction resolved to ${shown}, not ${SHAPE}`,
    );
  });

  it('refuses a plain value instead of a promise', async () => {
    expect(
      await messageOf(
        transactionIn(returning('runInTransaction', { answer: AcquireResult.COMPLETED }), claim, run),
      ),
    ).toBe('runInTransaction returned the object {"answer":"COMPLETED"} instead of a promise');
  });
});
