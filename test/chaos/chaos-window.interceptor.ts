import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Observable, tap, finalize } from 'rxjs';
import { IdempotencyInProgressError, IdempotencyStoreError, SqsContext } from '../../lib';
import { ChaosStats } from './chaos-stats';
import { EffectWindow } from './effect-window';
import { PoisonChaosError, TransientChaosError } from './chaos-errors';

/**
 * Wraps `@Idempotent()` (it is declared below it): counts each delivery's outcome, and closes the
 * effect window once the claim is settled.
 */
@Injectable()
export class ChaosWindowInterceptor implements NestInterceptor {
  constructor(
    private readonly window: EffectWindow,
    private readonly stats: ChaosStats,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const ctx = context.getArgByIndex<SqsContext>(1);
    if (ctx.state.idempotencyOutcome !== undefined) {
      // Inside @Idempotent(), this interceptor would close the window before markComplete.
      throw new Error('ChaosWindowInterceptor must wrap @Idempotent(): declare it below @Idempotent()');
    }
    const counts = this.stats.counts;
    counts.deliveries++;
    this.window.active++;
    return next.handle().pipe(
      tap({
        complete: () => {
          if (ctx.state.idempotencyOutcome === 'DUPLICATE') {
            counts.duplicatesAcked++;
          } else {
            counts.applied++;
            counts.maxReceiveCountApplied = Math.max(counts.maxReceiveCountApplied, ctx.receiveCount);
          }
        },
        error: (error: unknown) => {
          if (error instanceof IdempotencyInProgressError) counts.inFlightDuplicates++;
          else if (error instanceof IdempotencyStoreError) counts.storeErrors++;
          else if (error instanceof TransientChaosError) counts.transientFailures++;
          else if (error instanceof PoisonChaosError) counts.poisonFailures++;
        },
      }),
      finalize(() => {
        this.window.active--;
        this.window.leave(ctx.state);
      }),
    );
  }
}
