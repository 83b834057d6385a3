import type { SqsConsumerOptions } from '../sqs-module-options.interface';

/**
 * sqs-consumer waits `authenticationErrorTimeout` after these errors (its own list, not exported),
 * else `pollingWaitTimeMs`; the log line says that wait plus the module's backoff.
 */
const PAUSING_CODES = new Set([
  'CredentialsError',
  'UnknownEndpoint',
  'AWS.SimpleQueueService.NonExistentQueue',
  'CredentialsProviderError',
  'InvalidAddress',
  'InvalidSecurity',
  'QueueDoesNotExist',
  'RequestThrottled',
  'OverLimit',
]);

const DEFAULT_AUTHENTICATION_ERROR_TIMEOUT_MS = 10_000;

/** How long sqs-consumer itself waits after this receive error before polling again. */
export function sqsConsumerPauseAfter(error: unknown, options: SqsConsumerOptions): number {
  const { code, statusCode } = (error ?? {}) as { code?: unknown; statusCode?: unknown };
  const pauses = statusCode === 403 || (typeof code === 'string' && PAUSING_CODES.has(code));
  return pauses
    ? (options.authenticationErrorTimeout ?? DEFAULT_AUTHENTICATION_ERROR_TIMEOUT_MS)
    : (options.pollingWaitTimeMs ?? 0);
}

/** The queue URL names no queue (a typo, another region or account, a queue not created yet). */
export function isMissingQueue(error: unknown): boolean {
  const { code, name, Code } = (error ?? {}) as { code?: unknown; name?: unknown; Code?: unknown };
  return [code, name, Code].some(
    (value) => value === 'QueueDoesNotExist' || value === 'AWS.SimpleQueueService.NonExistentQueue',
  );
}

/** Milliseconds for people: "167 ms", "10.2 s". */
export function formatDelay(ms: number): string {
  return ms < 1_000 ? `${Math.round(ms)} ms` : `${(ms / 1_000).toFixed(1)} s`;
}

/** An error's message without sqs-consumer's prefix or a trailing period (it goes in parentheses). */
export function receiveErrorText(error: Error): string {
  return error.message.replace(/^SQS receive message failed: /, '').replace(/\.+$/, '');
}
