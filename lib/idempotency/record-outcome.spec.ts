import { IdempotencyInProgressError } from './idempotency.errors';
import { SkipMessageException } from '../common/skip-message.exception';
import { outcomeOfError, runHandlerChain, SqsHandlerOutcome } from './record-outcome';

type Status = SqsHandlerOutcome['status'];

/** Runs a chain whose handlers answer `statuses` in turn; returns its outcome and the handlers that ran. */
async function chain(...statuses: Status[]) {
  const ran: number[] = [];
  const errors = statuses.map((status, i) =>
    status === 'OK' || status === 'DUPLICATE' ? undefined : new Error(`${status} of ${i}`),
  );
  const outcome = await runHandlerChain(statuses, async (status, index) => {
    ran.push(index);
    return { status, error: errors[index] };
  });
  return { outcome, ran, errors };
}

describe('runHandlerChain', () => {
  it('a record whose first handler ran and a later one skipped is OK: the skip does not hide the work', async () => {
    const { outcome, ran } = await chain('OK', 'SKIPPED');
    expect(outcome).toEqual({ status: 'OK', error: undefined });
    expect(ran).toEqual([0, 1]);
  });

  it('a skip before a handler that runs is OK as well', async () => {
    expect((await chain('SKIPPED', 'OK')).outcome).toEqual({ status: 'OK', error: undefined });
  });

  it('is SKIPPED, with the last skip as its reason, when no handler ran and one skipped', async () => {
    const { outcome, errors } = await chain('DUPLICATE', 'SKIPPED', 'SKIPPED', 'DUPLICATE');
    expect(outcome.status).toBe('SKIPPED');
    expect(outcome.error).toBe(errors[2]);
  });

  it('is DUPLICATE when every handler met a completed key', async () => {
    expect((await chain('DUPLICATE', 'DUPLICATE')).outcome).toEqual({
      status: 'DUPLICATE',
      error: undefined,
    });
  });

  it('is OK when one handler ran and the others were duplicates', async () => {
    expect((await chain('DUPLICATE', 'OK', 'DUPLICATE')).outcome).toEqual({ status: 'OK', error: undefined });
  });

  it.each(['FAILED', 'IN_PROGRESS'] as const)(
    'stops at the first %s handler, which is the record outcome (a redelivery runs the rest)',
    async (status) => {
      const { outcome, ran, errors } = await chain('OK', status, 'OK');
      expect(outcome).toEqual({ status, error: errors[1] });
      expect(outcome.error).toBe(errors[1]);
      expect(ran).toEqual([0, 1]);
    },
  );

  it('a failure after a skip still fails the record', async () => {
    const { outcome, ran } = await chain('SKIPPED', 'FAILED', 'OK');
    expect(outcome.status).toBe('FAILED');
    expect(ran).toEqual([0, 1]);
  });

  it('runs every handler once, in order, passing each its index', async () => {
    const seen: Array<[string, number]> = [];
    await runHandlerChain(['a', 'b', 'c'], async (handler, index) => {
      seen.push([handler, index]);
      return { status: 'OK' };
    });
    expect(seen).toEqual([
      ['a', 0],
      ['b', 1],
      ['c', 2],
    ]);
  });
});

describe('outcomeOfError', () => {
  it('a SkipMessageException is SKIPPED, with the exception as its reason', () => {
    const skip = new SkipMessageException('already shipped');
    expect(outcomeOfError(skip)).toEqual({ status: 'SKIPPED', error: skip });
  });

  it('a SkipMessageException of another copy of the package is SKIPPED too', () => {
    const foreign = Object.assign(new Error('obsolete'), {
      name: 'SkipMessageException',
      reason: 'obsolete',
    });
    expect(outcomeOfError(foreign).status).toBe('SKIPPED');
  });

  it('an in-flight duplicate is IN_PROGRESS (it fails on purpose and is redelivered)', () => {
    const inProgress = new IdempotencyInProgressError('order-1');
    expect(outcomeOfError(inProgress)).toEqual({ status: 'IN_PROGRESS', error: inProgress });
  });

  it('any other Error is FAILED and kept as it is', () => {
    const error = new TypeError('boom');
    const outcome = outcomeOfError(error);
    expect(outcome.status).toBe('FAILED');
    expect(outcome.error).toBe(error);
  });

  it('an error-shaped object (an Error of another realm) is kept as it is', () => {
    const shaped = { name: 'Error', message: 'from another realm' };
    expect(outcomeOfError(shaped).error).toBe(shaped);
  });

  it.each([
    ['a string', 'nope', 'the handler threw the string "nope", not an Error'],
    ['undefined', undefined, 'the handler threw undefined, not an Error'],
    ['null', null, 'the handler threw null, not an Error'],
    ['a number', 42, 'the handler threw number 42, not an Error'],
    ['an object', { code: 7 }, 'the handler threw the object {"code":7}, not an Error'],
    [
      'an object with a non-string message',
      { message: 7 },
      'the handler threw the object {"message":7}, not an Error',
    ],
  ])(
    '%s thrown becomes a FAILED Error saying what was thrown, with it as the cause',
    (_, thrown, message) => {
      const outcome = outcomeOfError(thrown);
      expect(outcome.status).toBe('FAILED');
      expect(outcome.error).toBeInstanceOf(Error);
      expect(outcome.error?.message).toBe(message);
      expect(outcome.error?.cause).toBe(thrown);
    },
  );

  it('an object that serializes to nothing is described by its string form', () => {
    expect(outcomeOfError({ toJSON: () => undefined }).error?.message).toBe(
      'the handler threw the object [object Object], not an Error',
    );
  });

  it('an object that cannot be serialized is described without throwing', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(outcomeOfError(circular).error?.message).toBe('the handler threw an object, not an Error');
  });

  it('a long object is cut to 200 characters in the description', () => {
    const message = outcomeOfError({ text: 'x'.repeat(500) }).error?.message ?? '';
    expect(message).toBe(
      `the handler threw the object ${JSON.stringify({ text: 'x'.repeat(500) }).slice(0, 200)}, not an Error`,
    );
  });
});
