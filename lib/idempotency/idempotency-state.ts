import type { ExecutionContext } from '@nestjs/common';

/**
 * What the idempotency claim decided for one message, as later interceptors, the handler and the
 * host (which logs and acks) see it.
 *
 * - `ACQUIRED`: first sighting, the handler ran (or is running) under the claim;
 * - `DUPLICATE`: the key was completed before, the handler did not run, the message is acked;
 * - `IN_PROGRESS`: another attempt holds the key, this copy fails on purpose;
 * - `KEYLESS`: no key and `requireKey: false`, the handler ran without dedup;
 * - `UNCLAIMED`: the store failed and `onStoreError: 'process'`, the handler ran without dedup;
 * - `FINGERPRINT_MISMATCH`: the key is held for a payload with another fingerprint, this copy fails.
 */
export type IdempotencyOutcome =
  'ACQUIRED' | 'DUPLICATE' | 'IN_PROGRESS' | 'KEYLESS' | 'UNCLAIMED' | 'FINGERPRINT_MISMATCH';

/** Per-message state shared along the pipeline (`ctx.state` of an `SqsContext`). */
export interface IdempotencyState {
  /** The resolved idempotency key (as read from the payload, before prefixing). */
  idempotencyKey?: string;
  idempotencyOutcome?: IdempotencyOutcome;
  /**
   * The exception the handler (or an interceptor after `@Idempotent()`) raised, as the claim saw
   * it. Nest's RPC exception filters replace exceptions before a transport sees them (an unknown
   * error becomes `{ status: 'error', message: 'Internal server error' }`), so a transport reads
   * the cause here: a `SkipMessageException` (ack) or an `IdempotencyInProgressError` (retry).
   */
  handlerError?: unknown;
  /**
   * The database transaction of a transactional handler (`@Idempotent({ transactional: true })`), as
   * the store's adapter gives it (a `pg` `PoolClient`, a TypeORM `EntityManager`), set before the
   * handler runs; also what `@IdempotencyTransaction()` injects.
   */
  transaction?: unknown;
  [key: string]: unknown;
}

/** Host contexts that carry their own state and lease budget (`SqsContext` does). */
interface StatefulContext {
  state: IdempotencyState;
  remainingTimeMs?(): number | undefined;
}

// Transport contexts of other Nest microservices (Redis, Kafka, ...) have no state of their own; it
// lives here for as long as the context object does, one per handler: a transport hands one
// context to every handler of a pattern (Nest runs them side by side), and each must make its own
// claim rather than take another handler's claim for its own.
const foreignContextState = new WeakMap<object, Map<Function, IdempotencyState>>();

function isStatefulContext(value: unknown): value is StatefulContext {
  return value !== null && typeof value === 'object' && typeof (value as StatefulContext).state === 'object';
}

/** The message payload, host context and state of an SQS or RPC handler call; `undefined` for other kinds. */
export function messageCallOf(
  context: ExecutionContext,
): { payload: unknown; hostContext: unknown; state: IdempotencyState } | undefined {
  const type = context.getType<string>();
  let payload: unknown;
  let hostContext: unknown;
  if (type === 'sqs') {
    payload = context.getArgByIndex(0);
    hostContext = context.getArgByIndex(1);
  } else if (type === 'rpc') {
    const rpc = context.switchToRpc();
    payload = rpc.getData();
    hostContext = rpc.getContext();
  } else {
    return undefined;
  }
  return { payload, hostContext, state: stateOf(hostContext, context.getHandler()) };
}

/**
 * The idempotency state of a handler's call: the host context's own (`SqsContext`; the SQS hosts
 * give each handler a context of its own), else one per context and handler, created on first use.
 */
export function stateOf(hostContext: unknown, handler: Function): IdempotencyState {
  if (isStatefulContext(hostContext)) return hostContext.state;
  if (hostContext === null || typeof hostContext !== 'object') return {};
  let states = foreignContextState.get(hostContext);
  if (states === undefined) {
    states = new Map();
    foreignContextState.set(hostContext, states);
  }
  let state = states.get(handler);
  if (state === undefined) {
    state = {};
    states.set(handler, state);
  }
  return state;
}

/**
 * The id an envelope gave the message (`SqsContext.envelopeKey`: EventBridge and CloudEvents `id`,
 * an S3 notification's object and sequencer), read structurally like the rest of a host context.
 */
export function envelopeKeyOf(hostContext: unknown): string | undefined {
  const key = (hostContext as { envelopeKey?: unknown } | null | undefined)?.envelopeKey;
  return typeof key === 'string' && key.length > 0 ? key : undefined;
}

/** Time left before the host kills the attempt (a Lambda deadline), if the host knows it. */
export function remainingTimeOf(hostContext: unknown): number | undefined {
  return isStatefulContext(hostContext) ? hostContext.remainingTimeMs?.() : undefined;
}

/**
 * "message <id> on queue "<name>"" for host contexts that know them (an `SqsContext`), so errors
 * raised by the idempotency layer name the message like every other per-record error.
 */
export function describeMessageOf(hostContext: unknown): string | undefined {
  const message = hostContext as { messageId?: unknown; queue?: unknown } | null | undefined;
  if (typeof message?.messageId !== 'string') return undefined;
  return typeof message.queue === 'string'
    ? `message ${message.messageId} on queue "${message.queue}"`
    : `message ${message.messageId}`;
}
