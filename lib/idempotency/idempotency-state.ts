import type { ExecutionContext } from '@nestjs/common';
import { ARRIVED_PAYLOAD, BATCH_HANDLER_CALL } from './idempotency.constants';

/**
 * What the claim decided for one message: `ACQUIRED` (the handler ran under the claim), `DUPLICATE`,
 * `IN_PROGRESS`, `KEYLESS` (no key, `requireKey: false`), `UNCLAIMED` (store down, `onStoreError:
 * 'process'`), `FINGERPRINT_MISMATCH`.
 */
export type IdempotencyOutcome =
  'ACQUIRED' | 'DUPLICATE' | 'IN_PROGRESS' | 'KEYLESS' | 'UNCLAIMED' | 'FINGERPRINT_MISMATCH';

/** Per-message state shared along the pipeline (`ctx.state` of an `SqsContext`). */
export interface IdempotencyState {
  /** The resolved idempotency key (as read from the payload, before prefixing). */
  idempotencyKey?: string;
  idempotencyOutcome?: IdempotencyOutcome;
  /** The exception the claim saw (Nest's RPC exception filters replace it before a transport sees it). */
  handlerError?: unknown;
  /** A transactional handler's transaction: what `@IdempotencyTransaction()` injects. */
  transaction?: unknown;
  [key: string]: unknown;
}

/** Host contexts that carry their own state and lease budget (`SqsContext` does). */
interface StatefulContext {
  state: IdempotencyState;
  remainingTimeMs?(): number | undefined;
}

// Other transports' contexts have no state of their own: it is kept per context and handler, since a
// transport hands one context to every handler of a pattern and each makes its own claim.
const foreignContextState = new WeakMap<object, Map<Function, IdempotencyState>>();

function isStatefulContext(value: unknown): value is StatefulContext {
  return value !== null && typeof value === 'object' && typeof (value as StatefulContext).state === 'object';
}

/** The payload, host context and state of an SQS or RPC handler call (its first two arguments); else `undefined`. */
export function messageCallOf(
  context: ExecutionContext,
): { payload: unknown; hostContext: unknown; state: IdempotencyState } | undefined {
  const type = context.getType<string>();
  if (type !== 'sqs' && type !== 'rpc') return undefined;
  const hostContext: unknown = context.getArgByIndex(1);
  // A batch handler's call: its events were claimed one by one before it (`batch-handler.claims.ts`).
  if ((hostContext as { [BATCH_HANDLER_CALL]?: true } | undefined)?.[BATCH_HANDLER_CALL]) return undefined;
  return {
    payload: context.getArgByIndex(0),
    hostContext,
    state: stateOf(hostContext, context.getHandler()),
  };
}

/** A call's state: the `SqsContext`'s own, else one per context and handler, made on first use. */
export function stateOf(hostContext: unknown, handler: Function): IdempotencyState {
  if (isStatefulContext(hostContext)) return hostContext.state;
  if (hostContext === null || typeof hostContext !== 'object') return {};
  let states = foreignContextState.get(hostContext);
  if (states === undefined) foreignContextState.set(hostContext, (states = new Map()));
  let state = states.get(handler);
  if (state === undefined) states.set(handler, (state = {}));
  return state;
}

/** The id an envelope gave the message (`SqsContext.envelopeKey`), read structurally. */
export function envelopeKeyOf(hostContext: unknown): string | undefined {
  const key = (hostContext as { envelopeKey?: unknown } | null | undefined)?.envelopeKey;
  return typeof key === 'string' && key.length > 0 ? key : undefined;
}

/** The payload of a call as it arrived: what the host context kept (`SqsContext`), else the handler's `payload`. */
export function arrivedPayloadOf(hostContext: unknown, payload: unknown): unknown {
  const arrived = (hostContext as { [ARRIVED_PAYLOAD]?: unknown } | null | undefined)?.[ARRIVED_PAYLOAD];
  return arrived === undefined ? payload : arrived;
}

/** Time left before the host kills the attempt (a Lambda deadline); `Infinity` when the host knows none. */
export function remainingTimeOf(hostContext: unknown): number {
  const remaining = isStatefulContext(hostContext) ? hostContext.remainingTimeMs?.() : undefined;
  return remaining !== undefined && Number.isFinite(remaining) ? remaining : Infinity;
}

/** "message <id> on queue "<name>"" where the host context knows them, for the idempotency errors. */
export function describeMessageOf(hostContext: unknown): string | undefined {
  const message = hostContext as { messageId?: unknown; queue?: unknown } | null | undefined;
  if (typeof message?.messageId !== 'string') return undefined;
  return typeof message.queue === 'string'
    ? `message ${message.messageId} on queue "${message.queue}"`
    : `message ${message.messageId}`;
}
