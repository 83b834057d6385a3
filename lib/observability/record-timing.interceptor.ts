import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import { Observable, tap } from 'rxjs';
import { messageCallOf } from '../idempotency/idempotency-state';
import {
  logLevelOfStatus,
  outcomeOfError,
  outcomeOfReturn,
  SqsHandlerOutcome,
} from '../idempotency/record-outcome';

/**
 * Logs one line per handler call with its outcome, key and duration, where the SQS hosts' record log
 * does not run (`@EventPattern()` handlers of other transports). Below `@Idempotent()` it times
 * duplicates too.
 *
 * @example
 * ```ts
 * @EventPattern('order_created')
 * @Idempotent()
 * @UseInterceptors(RecordTimingInterceptor)
 * async onOrderCreated(@Payload() event: OrderCreated) { ... }
 * ```
 */
@Injectable()
export class RecordTimingInterceptor implements NestInterceptor {
  private readonly logger = new Logger('RecordTiming');

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const started = performance.now();
    const call = messageCallOf(context);
    const handler = `${context.getClass().name}.${context.getHandler().name}`;
    // The status and level come from the outcome table, as for the SQS hosts' record lines.
    const report = ({ status, error }: SqsHandlerOutcome) => {
      const durationMs = (performance.now() - started).toFixed(1);
      const key = call?.state.idempotencyKey ?? '-';
      let line = `status=${status} handler=${handler} key=${key} durationMs=${durationMs}`;
      if (error !== undefined) line += ` reason=${JSON.stringify(error.message)}`;
      this.logger[logLevelOfStatus(status)](line);
    };
    return next.handle().pipe(
      tap({
        complete: () => report(outcomeOfReturn(call?.state.idempotencyOutcome)),
        error: (error: unknown) => report(outcomeOfError(error)),
      }),
    );
  }
}
