/**
 * The fate of one record:
 * - `OK`: handled;
 * - `SKIPPED`: a `SkipMessageException` acked it on purpose;
 * - `DUPLICATE`: its idempotency key was completed before, the handler did not run;
 * - `IN_PROGRESS`: another attempt holds its key, it fails on purpose and is redelivered;
 * - `FAILED`: the handler (or a guard, interceptor, pipe, the store) failed, or it was not attempted
 *   because an earlier FIFO record failed;
 * - `INVALID`: no body, not JSON, no route, or failed validation; no key was claimed.
 */
export type SqsRecordStatus = 'OK' | 'SKIPPED' | 'DUPLICATE' | 'IN_PROGRESS' | 'FAILED' | 'INVALID';

/** What happened to one record. */
export interface SqsRecordResult {
  readonly messageId: string;
  readonly status: SqsRecordStatus;
  /** The routed event type, once known. */
  readonly eventType?: string;
  /** The resolved idempotency key, when an `@Idempotent()` handler ran. */
  readonly key?: string;
  /** Why it failed or was skipped. */
  readonly error?: Error;
  readonly durationMs: number;
}

/** True for the statuses that leave the record on the queue for redelivery. */
export function isFailedStatus(status: SqsRecordStatus): boolean {
  return status === 'FAILED' || status === 'INVALID' || status === 'IN_PROGRESS';
}
