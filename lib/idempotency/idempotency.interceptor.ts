import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor, Optional } from '@nestjs/common';
import { from, Observable } from 'rxjs';
import { SQS_DIRECT_CLAIM } from './idempotency.constants';
import { outcomeOfError, outcomeOfReturn, SqsHandlerOutcome } from './record-outcome';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { IdempotencyService, outcomeOf } from './idempotency.service';
import { IdempotencyState, messageCallOf, stateOf } from './idempotency-state';
import type { IdempotencyPolicy } from './idempotency-policy';
import { IdempotentHandlerRegistry } from './idempotent-handler.registry';
import { type RecordObserver, RecordObservers } from './record-observer';

/**
 * Applied by `@Idempotent()`: claims the key before the handler (and the interceptors after it) run,
 * and settles it from the outcome (`IdempotencyService`). It counts a call only for context type
 * `'rpc'` (Nest's transports, `SqsServer`'s routes): the SQS pipeline counts its own.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  /** The SQS hosts may call `directClaimFor` instead of `intercept` (`lib/sqs/nest/sqs-direct-call.ts`). */
  static readonly [SQS_DIRECT_CLAIM] = true;

  /** Context types already warned about (once per interceptor, not per process: apps in one process differ). */
  private readonly warnedTypes = new Set<string>();

  constructor(
    @Optional() private readonly registry?: IdempotentHandlerRegistry,
    @Optional() private readonly idempotency?: IdempotencyService,
    @Optional() private readonly observers?: RecordObservers,
  ) {
    if (!registry || !idempotency) {
      throw new IdempotencyConfigurationError(
        '@Idempotent() needs IdempotencyModule: add IdempotencyModule.forRoot({ ... }) to the imports of your root module ' +
          '(it is global by default), or import it into the module of this handler when isGlobal is false.',
      );
    }
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const policy = this.registry!.policyFor(context.getHandler(), context.getClass());
    const call = policy && messageCallOf(context);
    if (!policy || !call) {
      this.warnUnsupported(context);
      return next.handle();
    }
    // @Idempotent() on both the class and the method registers this interceptor twice; the first
    // one to run owns the claim and the second steps aside.
    const { state } = call;
    if (state.idempotencyOutcome !== undefined) return next.handle();
    // Only 'rpc' calls are counted (and timed) here: the SQS hosts' pipeline counts every 'sqs' call itself.
    const observer = context.getType<string>() === 'rpc' ? this.observers?.current : undefined;
    const started = observer ? performance.now() : 0;
    const settled = this.idempotency!.execute(policy, call.payload, call.hostContext, state, () =>
      next.handle(),
    );
    return from(observer ? countCall(observer, policy, state, call.hostContext, settled, started) : settled);
  }

  /**
   * What `intercept` does for an SQS handler call, without Nest's interceptor machinery: the SQS hosts'
   * direct path (`sqs-direct-call.ts`), where `@Idempotent()` is the handler's one enhancer. `run`
   * calls the handler (its parameters resolved inside the claim, as Nest does); an observable it
   * returns is consumed. `undefined` when the handler has no policy (`intercept` would only call it).
   */
  directClaimFor(
    handler: Function,
    classRef: Function,
  ): ((payload: unknown, hostContext: unknown, run: () => unknown) => Promise<unknown>) | undefined {
    const policy = this.registry!.policyFor(handler, classRef);
    if (!policy) return undefined;
    const idempotency = this.idempotency!;
    return (payload, hostContext, run) => {
      const state = stateOf(hostContext, handler);
      // As in intercept: @Idempotent() on both class and method, the second steps aside.
      if (state.idempotencyOutcome !== undefined) return outcomeOf(run);
      return idempotency.execute(policy, payload, hostContext, state, run);
    };
  }

  /** Whether `other` claims in the same store under the same policies (one `IdempotencyModule`). */
  sharesClaimsWith(other: unknown): boolean {
    return (
      other instanceof IdempotencyInterceptor &&
      other.registry === this.registry &&
      other.idempotency === this.idempotency
    );
  }

  private warnUnsupported(context: ExecutionContext): void {
    const type = context.getType<string>();
    if (type === 'sqs' || type === 'rpc' || this.warnedTypes.has(type)) return;
    this.warnedTypes.add(type);
    new Logger('Idempotency').warn(
      `@Idempotent() only applies to message handlers (SQS, microservice events); ignored in a '${type}' context.`,
    );
  }
}

/** Counts an `@EventPattern()` call once it has settled, and hands it to the Center's journal. */
async function countCall<T>(
  observer: RecordObserver,
  policy: IdempotencyPolicy,
  state: IdempotencyState,
  hostContext: unknown,
  settled: Promise<T>,
  started: number,
): Promise<T> {
  let outcome: SqsHandlerOutcome | undefined;
  try {
    const value = await settled;
    outcome = outcomeOfReturn(state.idempotencyOutcome);
    return value;
  } catch (error) {
    outcome = outcomeOfError(error);
    throw error;
  } finally {
    const { status, error } = outcome!;
    const durationMs = performance.now() - started;
    observer.countCall(policy.eventType, policy.handlerName, status, state.idempotencyOutcome, durationMs);
    // What the transport's context says of the message, where it says it (an SqsServer route's does).
    const { messageId, queue, receiveCount } = (hostContext ?? {}) as Record<string, unknown>;
    const { eventType } = policy;
    const id = typeof messageId === 'string' ? messageId : '';
    const result = { messageId: id, status, eventType, key: state.idempotencyKey, error, durationMs };
    const receives = typeof receiveCount === 'number' ? receiveCount : 0;
    observer.recordEnded(typeof queue === 'string' ? queue : '', result, receives, false);
  }
}
