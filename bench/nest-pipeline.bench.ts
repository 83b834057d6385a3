import {
  CallHandler,
  ExecutionContext,
  Injectable,
  Module,
  NestInterceptor,
  UseInterceptors,
} from '@nestjs/common';
import {
  IdempotencyModule,
  SqsLambdaEvent,
  SqsLambdaHandler,
  SqsMessageHandler,
  SqsModule,
  createSqsLambdaHandler,
} from '../lib';
import { buildLambdaContext, buildSqsEvent, buildSqsRecord } from '../lib/testing';
import { IdempotentOrdersHandler, OrderCreated, PlainOrdersHandler } from './bench-orders';
import { BenchCase, measureOps, runRounds, Sample } from './bench-harness';
import { newPayload } from './bench-redis';

/**
 * What `@Idempotent()` costs in the whole Lambda path (decode, validate, route, Nest pipeline,
 * batch rules, partial batch response): a 10-record batch of first sightings through
 * `createSqsLambdaHandler`, with the in-memory store, against the same handler without it, and
 * behind a Nest interceptor that does nothing (what Nest's interceptor machinery costs by itself:
 * `@Idempotent()` is an interceptor).
 *
 * And what the Idempotency Center's activity costs on that path (the record journal, per-minute
 * counts and claim latency, fed once per record): the idempotent app with it on (the default)
 * against `stats: { activity: false }`, for first sightings (OK records: counted only) and for
 * duplicates (each one also written into the journal's ring of recent records).
 */

/** Does nothing: what any Nest interceptor costs by itself. */
@Injectable()
class NoopInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler) {
    return next.handle();
  }
}

@Injectable()
class InterceptedOrdersHandler {
  @SqsMessageHandler(OrderCreated)
  @UseInterceptors(NoopInterceptor)
  async onOrderCreated(_event: OrderCreated): Promise<void> {}
}

@Module({
  imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({})],
  providers: [IdempotentOrdersHandler],
})
class IdempotentApp {}

@Module({
  imports: [IdempotencyModule.forRoot({ stats: { activity: false } }), SqsModule.forRoot({})],
  providers: [IdempotentOrdersHandler],
})
class IdempotentCenterOffApp {}

@Module({ imports: [SqsModule.forRoot({})], providers: [PlainOrdersHandler] })
class PlainApp {}

@Module({ imports: [SqsModule.forRoot({})], providers: [InterceptedOrdersHandler, NoopInterceptor] })
class InterceptedApp {}

const BATCH = 10;

/** Records per second and CPU per record, by handler. */
export interface PipelineResults {
  /** The handler alone. */
  plain: Sample;
  /** The handler behind a Nest interceptor that does nothing. */
  noopInterceptor: Sample;
  /** The handler with `@Idempotent()` on the in-memory store (the Center's activity on: the default). */
  idempotent: Sample;
  /** The same with `stats: { activity: false }`. */
  idempotentCenterOff: Sample;
  /** Every record a duplicate of a completed one, the Center's activity on. */
  duplicates: Sample;
  /** Every record a duplicate, `stats: { activity: false }`. */
  duplicatesCenterOff: Sample;
}

export async function benchNestPipeline(
  { batches, rounds, warmups }: { batches: number; rounds: number; warmups: number },
  log: (line: string) => void,
): Promise<PipelineResults> {
  // logger: false silences Nest, including the one log line per record.
  const quiet = { nestOptions: { logger: false as const } };
  const handlers: Record<keyof PipelineResults, SqsLambdaHandler> = {
    plain: createSqsLambdaHandler(PlainApp, quiet),
    noopInterceptor: createSqsLambdaHandler(InterceptedApp, quiet),
    idempotent: createSqsLambdaHandler(IdempotentApp, quiet),
    idempotentCenterOff: createSqsLambdaHandler(IdempotentCenterOffApp, quiet),
    duplicates: createSqsLambdaHandler(IdempotentApp, quiet),
    duplicatesCenterOff: createSqsLambdaHandler(IdempotentCenterOffApp, quiet),
  };
  const duplicateCases = new Set(['duplicates', 'duplicatesCenterOff']);
  try {
    const cases: BenchCase[] = Object.entries(handlers).map(([id, handler]) => {
      let events: SqsLambdaEvent[] = [];
      return {
        id,
        async prepare() {
          await handler.getApp();
          // Fresh ids for every batch: each record is a first sighting and its handler runs.
          events = Array.from({ length: batches }, () =>
            buildSqsEvent(
              Array.from({ length: BATCH }, () => buildSqsRecord({ type: 'order_created', ...newPayload() })),
            ),
          );
          if (duplicateCases.has(id)) {
            // Completed once, untimed: every record measured is then a duplicate.
            const context = buildLambdaContext(30_000);
            for (const event of events) await handler(event, context);
          }
        },
        async measure(): Promise<Sample> {
          const context = buildLambdaContext(30_000);
          const perBatch = await measureOps(
            async (i) => {
              const { batchItemFailures } = await handler(events[i], context);
              if (batchItemFailures.length > 0) throw new Error(`${id}: a record failed`);
            },
            batches,
            1,
          );
          return { perSecond: perBatch.perSecond * BATCH, cpuMicros: perBatch.cpuMicros / BATCH };
        },
      };
    });
    const results = await runRounds(cases, {
      rounds,
      warmups,
      onRound: (round) => log(round < 0 ? '  warm-up round' : `  round ${round + 1}/${rounds}`),
    });
    const medianOf = (id: keyof PipelineResults) => results.get(id)!;
    return {
      plain: medianOf('plain'),
      noopInterceptor: medianOf('noopInterceptor'),
      idempotent: medianOf('idempotent'),
      idempotentCenterOff: medianOf('idempotentCenterOff'),
      duplicates: medianOf('duplicates'),
      duplicatesCenterOff: medianOf('duplicatesCenterOff'),
    };
  } finally {
    await Promise.all(Object.values(handlers).map((handler) => handler.close()));
  }
}
