import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor, Optional } from '@nestjs/common';
import { from, lastValueFrom, Observable } from 'rxjs';
import { IdempotencyConfigurationError } from './idempotency.errors';
import { IdempotencyService } from './idempotency.service';
import { messageCallOf } from './idempotency-state';
import { IdempotentHandlerRegistry } from './idempotent-handler.registry';

/**
 * Applied by `@Idempotent()`. It claims the key before the handler (and the interceptors declared
 * after it) run, and settles the claim from the handler's outcome; the contract itself lives in
 * `IdempotencyService`. Works for SQS handlers (context type `'sqs'`) and `@EventPattern()`
 * handlers of any Nest transport (`'rpc'`).
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private static warnedTypes = new Set<string>();

  constructor(
    @Optional() private readonly registry?: IdempotentHandlerRegistry,
    @Optional() private readonly idempotency?: IdempotencyService,
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
    return from(
      this.idempotency!.execute(policy, call.payload, call.hostContext, state, () =>
        lastValueFrom(next.handle(), { defaultValue: undefined }),
      ).catch((error: unknown) => {
        // Kept for RPC transports, whose exception filters replace it before they see it.
        state.handlerError = error;
        throw error;
      }),
    );
  }

  private warnUnsupported(context: ExecutionContext): void {
    const type = context.getType<string>();
    if (type === 'sqs' || type === 'rpc' || IdempotencyInterceptor.warnedTypes.has(type)) return;
    IdempotencyInterceptor.warnedTypes.add(type);
    new Logger('Idempotency').warn(
      `@Idempotent() only applies to message handlers (SQS, microservice events); ignored in a '${type}' context.`,
    );
  }
}
