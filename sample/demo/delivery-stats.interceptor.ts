import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Observable, tap } from 'rxjs';
import { IdempotencyInProgressError, isSqsContext, SqsContext } from '../../lib';
import { DeliveryStats } from './delivery-stats';

/**
 * Counts what happens to each delivery. A global interceptor, so it wraps `@Idempotent()`'s and
 * sees its outcome: a user-land interceptor like any other, through Nest's pipeline.
 */
@Injectable()
export class DeliveryStatsInterceptor implements NestInterceptor {
  constructor(private readonly stats: DeliveryStats) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (!isSqsContext(context)) return next.handle();
    const sqs = context.getArgByIndex<SqsContext>(1);
    const stats = this.stats;
    stats.deliveries++;
    stats.maxReceiveCount = Math.max(stats.maxReceiveCount, sqs.receiveCount);
    return next.handle().pipe(
      tap({
        complete: () => {
          if (sqs.state.idempotencyOutcome === 'DUPLICATE') stats.duplicates++;
          else stats.handled++;
        },
        error: (error: unknown) => {
          if (error instanceof IdempotencyInProgressError) stats.inFlightDuplicates++;
          else stats.failures++;
        },
      }),
    );
  }
}
