import { BaseRpcContext } from '@nestjs/microservices';
import type { SqsContext } from '../sqs/sqs-context';

/** What `SqsRpcContext` reads through from the record's `SqsContext`, documented there. */
const GETTERS = [
  'state',
  'messageId',
  'queue',
  'eventType',
  'receiveCount',
  'groupId',
  'deduplicationId',
  'body',
  'attributes',
  'messageAttributes',
  'envelopes',
  'envelopeKey',
  'record',
  'raw',
] as const;
const METHODS = ['messageAttribute', 'envelope'] as const;

type SqsContextView = Readonly<Pick<SqsContext, (typeof GETTERS)[number] | (typeof METHODS)[number]>>;
const RpcContextWithSqsView = BaseRpcContext as new (
  args: [SqsContext],
) => BaseRpcContext<[SqsContext]> & SqsContextView;

/**
 * What `@Ctx()` gives an `@EventPattern()` handler of `SqsServer`: Nest's `BaseRpcContext` with what
 * `SqsContext` tells (`messageId`, `queue`, `envelope('sns')`, ...), and `state` (the idempotency key
 * of an `@Idempotent()` handler).
 */
export class SqsRpcContext extends RpcContextWithSqsView {
  constructor(context: SqsContext) {
    super([context]);
  }

  /** The message as `@SqsMessageHandler()` handlers see it. */
  getSqsContext(): SqsContext {
    return this.args[0];
  }
}

for (const name of GETTERS) {
  Object.defineProperty(SqsRpcContext.prototype, name, {
    get(this: SqsRpcContext) {
      return this.getSqsContext()[name];
    },
  });
}
for (const name of METHODS) {
  Object.defineProperty(SqsRpcContext.prototype, name, {
    value(this: SqsRpcContext, ...args: unknown[]) {
      const context = this.getSqsContext();
      return Reflect.apply(context[name], context, args);
    },
  });
}
