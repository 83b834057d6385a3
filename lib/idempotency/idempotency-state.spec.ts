import type { ExecutionContext } from '@nestjs/common';
import { ARRIVED_PAYLOAD, BATCH_HANDLER_CALL } from './idempotency.constants';
import {
  arrivedPayloadOf,
  describeMessageOf,
  envelopeKeyOf,
  messageCallOf,
  remainingTimeOf,
  stateOf,
} from './idempotency-state';

function handlerA() {}
function handlerB() {}

/** The part of an ExecutionContext that messageCallOf reads. */
function executionContext(type: string, args: unknown[], handler: Function = handlerA): ExecutionContext {
  return {
    getType: () => type,
    getArgByIndex: (index: number) => args[index],
    switchToRpc: () => ({ getData: () => args[0], getContext: () => args[1] }),
    getHandler: () => handler,
  } as unknown as ExecutionContext;
}

describe('idempotency state', () => {
  describe('stateOf', () => {
    it('uses the state an SqsContext carries, for every handler', () => {
      const context = { state: { idempotencyKey: 'k' } };
      expect(stateOf(context, handlerA)).toBe(context.state);
      expect(stateOf(context, handlerB)).toBe(context.state);
    });

    it('gives each handler of a foreign context its own state, the same on every call', () => {
      const context = { pattern: 'order_created' };
      const a = stateOf(context, handlerA);
      const b = stateOf(context, handlerB);
      expect(a).not.toBe(b);
      expect(stateOf(context, handlerA)).toBe(a);
      expect(stateOf(context, handlerB)).toBe(b);
      // A second handler's first call on a context that already has states gets its own too.
      a.idempotencyKey = 'a-key';
      expect(stateOf(context, handlerB).idempotencyKey).toBeUndefined();
      expect(stateOf({ pattern: 'order_created' }, handlerA)).not.toBe(a);
    });

    it('does not take a `state` that is not an object for the context’s own', () => {
      const context = { state: 'not state' };
      const state = stateOf(context, handlerA);
      expect(state).toEqual({});
      expect(state).not.toBe(context.state);
      expect(stateOf(context, handlerA)).toBe(state);
    });

    it('gives a fresh state to contexts that are not objects', () => {
      expect(stateOf(undefined, handlerA)).toEqual({});
      expect(stateOf(null, handlerA)).toEqual({});
      const fromString = stateOf('ctx', handlerA);
      expect(fromString).toEqual({});
      expect(stateOf('ctx', handlerA)).not.toBe(fromString);
    });
  });

  describe('messageCallOf', () => {
    it('reads an SQS call: payload, SqsContext and its state', () => {
      const hostContext = { state: {}, messageId: 'm-1' };
      const call = messageCallOf(executionContext('sqs', [{ id: 1 }, hostContext]));
      expect(call).toEqual({ payload: { id: 1 }, hostContext, state: hostContext.state });
      expect(call?.state).toBe(hostContext.state);
    });

    it('reads an RPC call through the RPC host, with a state per handler', () => {
      const hostContext = { pattern: 'p' };
      const a = messageCallOf(executionContext('rpc', [{ id: 2 }, hostContext], handlerA));
      const b = messageCallOf(executionContext('rpc', [{ id: 2 }, hostContext], handlerB));
      expect(a?.payload).toEqual({ id: 2 });
      expect(a?.hostContext).toBe(hostContext);
      expect(a?.state).toBe(stateOf(hostContext, handlerA));
      expect(b?.state).toBe(stateOf(hostContext, handlerB));
      expect(a?.state).not.toBe(b?.state);
    });

    it('has nothing to say of HTTP or other calls', () => {
      expect(messageCallOf(executionContext('http', [{}, {}]))).toBeUndefined();
      expect(messageCallOf(executionContext('ws', [{}, {}]))).toBeUndefined();
    });

    it("has nothing to say of a batch handler's call: its events were claimed one by one before it", () => {
      const batchCall = { state: {}, [BATCH_HANDLER_CALL]: true };
      expect(messageCallOf(executionContext('sqs', [[{ id: 'a' }], batchCall]))).toBeUndefined();
    });
  });

  describe('arrivedPayloadOf', () => {
    it('reads the payload as it arrived where the context kept it, else takes the handler’s', () => {
      const arrived = { id: 'a', extra: true };
      expect(arrivedPayloadOf({ [ARRIVED_PAYLOAD]: arrived }, { id: 'a' })).toBe(arrived);
      const payload = { id: 'b' };
      expect(arrivedPayloadOf({}, payload)).toBe(payload);
      expect(arrivedPayloadOf(undefined, payload)).toBe(payload);
      expect(arrivedPayloadOf(null, payload)).toBe(payload);
    });
  });

  describe('envelopeKeyOf', () => {
    it('returns a non-empty string envelopeKey, else nothing', () => {
      expect(envelopeKeyOf({ envelopeKey: 'evt-1' })).toBe('evt-1');
      expect(envelopeKeyOf({ envelopeKey: '' })).toBeUndefined();
      expect(envelopeKeyOf({ envelopeKey: 42 })).toBeUndefined();
      expect(envelopeKeyOf({})).toBeUndefined();
      expect(envelopeKeyOf(null)).toBeUndefined();
      expect(envelopeKeyOf(undefined)).toBeUndefined();
    });
  });

  describe('remainingTimeOf', () => {
    it('asks a stateful context for its time left, and nothing else (Infinity: no deadline)', () => {
      expect(remainingTimeOf({ state: {}, remainingTimeMs: () => 1234 })).toBe(1234);
      expect(remainingTimeOf({ state: {} })).toBe(Infinity);
      expect(remainingTimeOf({ state: {}, remainingTimeMs: () => undefined })).toBe(Infinity);
      expect(remainingTimeOf({ state: {}, remainingTimeMs: () => Number.NaN })).toBe(Infinity);
      expect(remainingTimeOf({ remainingTimeMs: () => 1234 })).toBe(Infinity);
      expect(remainingTimeOf(null)).toBe(Infinity);
    });
  });

  describe('describeMessageOf', () => {
    it('names the message and its queue when the context knows them', () => {
      expect(describeMessageOf({ messageId: 'm-1', queue: 'orders' })).toBe('message m-1 on queue "orders"');
      expect(describeMessageOf({ messageId: 'm-1' })).toBe('message m-1');
      expect(describeMessageOf({ messageId: 'm-1', queue: 7 })).toBe('message m-1');
      expect(describeMessageOf({ messageId: 7, queue: 'orders' })).toBeUndefined();
      expect(describeMessageOf(null)).toBeUndefined();
      expect(describeMessageOf(undefined)).toBeUndefined();
    });
  });
});
