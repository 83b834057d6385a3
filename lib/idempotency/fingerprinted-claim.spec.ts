import { IdempotencyError } from '../common/sqs-idempotency.error';
import { AcquireResult } from '../stores/idempotency-store.interface';
import { ARRIVED_PAYLOAD } from './idempotency.constants';
import { IdempotencyFingerprintMismatchError } from './idempotency.errors';
import { fingerprintClaimOf, fingerprintMismatchOf } from './fingerprinted-claim';
import type { IdempotencyPolicy } from './idempotency-policy';

/** A policy with a fingerprinter that answers `of` (or throws what it throws). */
function policyWith(of: (event: unknown, context: unknown) => string): IdempotencyPolicy {
  return {
    handlerName: 'Orders.onCreated',
    fingerprint: { source: 'fields orderId, amount', of },
  } as unknown as IdempotencyPolicy;
}
const fixed = policyWith(() => 'fp-1');

describe('fingerprintClaimOf', () => {
  it('keeps the fingerprint of the payload and the message id the host knows', () => {
    const of = jest.fn(() => 'fp-1');
    const context = { messageId: 'm-1', queue: 'orders' };
    expect(fingerprintClaimOf(policyWith(of), { orderId: 1 }, context)).toStrictEqual({
      fingerprint: 'fp-1',
      messageId: 'm-1',
    });
    expect(of).toHaveBeenCalledWith({ orderId: 1 }, context);
  });

  it('fingerprints the payload as it arrived where the host context kept it, not the handler’s event', () => {
    const of = jest.fn(() => 'fp-1');
    const arrived = { orderId: 1, at: '2024-05-01T10:00:00' };
    const context = { messageId: 'm-1', [ARRIVED_PAYLOAD]: arrived };
    fingerprintClaimOf(policyWith(of), { orderId: 1, at: new Date(0) }, context);
    expect(of).toHaveBeenCalledWith(arrived, context);
  });

  it.each<[string, unknown]>([
    ['no host context', undefined],
    ['a null host context', null],
    ['a context without a message id', { queue: 'orders' }],
    ['an empty message id', { messageId: '' }],
    ['a message id that is no string', { messageId: 42 }],
  ])('keeps the fingerprint alone for %s', (_, context) => {
    expect(fingerprintClaimOf(fixed, {}, context)).toStrictEqual({ fingerprint: 'fp-1' });
  });

  it('fails the record with an error naming the message, the fingerprint source, the handler and the cause', () => {
    const cycle = new TypeError('Converting circular structure to JSON');
    const failing = policyWith(() => {
      throw cycle;
    });
    let error: unknown;
    try {
      fingerprintClaimOf(failing, {}, { messageId: 'm-1', queue: 'orders' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(IdempotencyError);
    expect(error).toMatchObject({ code: 'IDEMPOTENCY_ERROR' });
    expect((error as Error).message).toBe(
      'message m-1 on queue "orders": could not compute the payload fingerprint (fields orderId, amount) for ' +
        'Orders.onCreated: Converting circular structure to JSON. ' +
        'The record fails: a fingerprint hashes plain JSON (the payload as it arrived, or what a fingerprint function ' +
        'returns); correct the value, or leave it out of what is fingerprinted (fingerprint: [the fields that identify the event]).',
    );
    expect((error as Error).cause).toBe(cycle);
  });

  it('says the same without a message label when the host names no message, and shows a thrown non-error', () => {
    const failing = policyWith(() => {
      throw 'no way';
    });
    let error: unknown;
    try {
      fingerprintClaimOf(failing, {}, undefined);
    } catch (caught) {
      error = caught;
    }
    expect((error as Error).message).toBe(
      'could not compute the payload fingerprint (fields orderId, amount) for Orders.onCreated: no way. ' +
        'The record fails: a fingerprint hashes plain JSON (the payload as it arrived, or what a fingerprint function ' +
        'returns); correct the value, or leave it out of what is fingerprinted (fingerprint: [the fields that identify the event]).',
    );
    expect((error as Error).cause).toBe('no way');
  });
});

describe('fingerprintMismatchOf: which answers are a mismatch', () => {
  const claim = { fingerprint: 'mine' };

  it.each<[AcquireResult, string | null | undefined, boolean]>([
    [AcquireResult.COMPLETED, 'other', true],
    [AcquireResult.IN_PROGRESS, 'other', true],
    [AcquireResult.COMPLETED, 'mine', false],
    [AcquireResult.IN_PROGRESS, 'mine', false],
    // Kept no fingerprint (claimed by tryAcquire, or before the option was on): nothing to compare.
    [AcquireResult.COMPLETED, undefined, false],
    [AcquireResult.IN_PROGRESS, null, false],
    // A claim that won is this message's own, whatever an older row a store reports held.
    [AcquireResult.ACQUIRED, 'other', false],
    [AcquireResult.ACQUIRED, undefined, false],
  ])('%s holding fingerprint %s: mismatch %s', (result, fingerprint, mismatch) => {
    const answer = { result, fingerprint: fingerprint as string | undefined };
    expect(fingerprintMismatchOf('k', answer, claim, undefined) !== undefined).toBe(mismatch);
  });
});

describe('fingerprintMismatchOf: the error', () => {
  it('names the key, both messages and whether the holder completed', () => {
    const error = fingerprintMismatchOf(
      'idempotency:orders:e1',
      { result: AcquireResult.COMPLETED, fingerprint: 'other', messageId: 'm-0' },
      { fingerprint: 'mine', messageId: 'm-1' },
      { messageId: 'm-1' },
    )!;
    expect(error).toBeInstanceOf(IdempotencyFingerprintMismatchError);
    expect(error).toMatchObject({
      key: 'idempotency:orders:e1',
      messageId: 'm-1',
      claimedByMessageId: 'm-0',
      claimState: 'COMPLETED',
    });
    expect(error.message).toMatch(
      /^Message m-1: idempotency key "idempotency:orders:e1" is completed for message m-0,/,
    );
  });

  it('says the holder is in flight, and that its id was not recorded when the store kept none (null)', () => {
    const error = fingerprintMismatchOf(
      'k',
      { result: AcquireResult.IN_PROGRESS, fingerprint: 'other', messageId: null as unknown as undefined },
      { fingerprint: 'mine' },
      undefined,
    )!;
    expect(error).toMatchObject({
      messageId: undefined,
      claimedByMessageId: undefined,
      claimState: 'IN_PROGRESS',
    });
    expect(error.message).toMatch(
      /^Idempotency key "k" is being processed for a message whose id was not recorded,/,
    );
  });
});
