import type { FingerprintClaim, FingerprintedAcquireAnswer } from '../stores/idempotency-store.interface';
import { AcquireResult } from '../stores/idempotency-store.interface';
import { IdempotencyError } from '../common/sqs-idempotency.error';
import { IdempotencyFingerprintMismatchError } from './idempotency.errors';
import { arrivedPayloadOf, describeMessageOf } from './idempotency-state';

/**
 * The claim of a handler with a `fingerprint`: a key held under another fingerprint is a mismatch,
 * completed or in flight; a claim that kept none is not compared. Loaded with the fingerprints
 * (`payload-fingerprint.ts`), whose fingerprinters carry these functions to the claim.
 */

/** A handler with a fingerprint, as the claim needs it (its `IdempotencyPolicy`). */
interface FingerprintedHandler {
  readonly handlerName: string;
  readonly fingerprint?: { readonly source: string; of(payload: unknown, context: unknown): string };
}

/**
 * What the claim of one message keeps: the fingerprint of its payload as it arrived (`payload` is the
 * handler's, for hosts that keep no other) and, when the host knows it, its id.
 */
export function fingerprintClaimOf(
  policy: FingerprintedHandler,
  payload: unknown,
  hostContext: unknown,
): FingerprintClaim {
  let fingerprint: string;
  try {
    fingerprint = policy.fingerprint!.of(arrivedPayloadOf(hostContext, payload), hostContext);
  } catch (error) {
    const label = describeMessageOf(hostContext);
    const failure = new IdempotencyError(
      `${label ? `${label}: ` : ''}could not compute the payload fingerprint (${policy.fingerprint!.source}) for ` +
        `${policy.handlerName}: ${error instanceof Error ? error.message : String(error)}. The record fails: ` +
        'a fingerprint hashes plain JSON (the payload as it arrived, or what a fingerprint function returns); ' +
        'correct the value, or leave it out of what is fingerprinted (fingerprint: [the fields that identify the event]).',
    );
    failure.cause = error;
    throw failure;
  }
  const messageId = (hostContext as { messageId?: unknown } | null | undefined)?.messageId;
  return typeof messageId === 'string' && messageId.length > 0 ? { fingerprint, messageId } : { fingerprint };
}

/**
 * The error a mismatch fails the record with, naming the key and both messages: when the claim holding
 * the key kept a fingerprint, and another one than `claim`'s. `undefined` when there is no mismatch.
 */
export function fingerprintMismatchOf(
  storeKey: string,
  answer: FingerprintedAcquireAnswer,
  claim: FingerprintClaim,
  hostContext: unknown,
): IdempotencyFingerprintMismatchError | undefined {
  if (answer.result === AcquireResult.ACQUIRED || answer.fingerprint == null) return undefined;
  if (answer.fingerprint === claim.fingerprint) return undefined;
  return new IdempotencyFingerprintMismatchError(
    storeKey,
    claim.messageId,
    answer.messageId ?? undefined,
    answer.result === AcquireResult.COMPLETED ? 'COMPLETED' : 'IN_PROGRESS',
    describeMessageOf(hostContext),
  );
}
