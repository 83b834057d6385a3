import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { CachePersistenceLayer } from '@aws-lambda-powertools/idempotency/cache';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { Module } from '@nestjs/common';
import { createClient } from '@redis/client';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { Redis } from 'ioredis';
import { z } from 'zod';
import {
  IdempotencyModule,
  IdempotencyStore,
  InMemoryIdempotencyStore,
  SqsLambdaEvent,
  SqsModule,
  createSqsLambdaHandler,
} from '../lib';
import { RedisIdempotencyStore, recommendedIoRedisOptions } from '../lib/stores/redis';
import { buildLambdaContext, buildSqsEvent, buildSqsRecord } from '../lib/testing';
import { IdempotentOrdersHandler, PlainOrdersHandler } from './bench-orders';
import { BenchCase, measureOps, Result, runRounds, settleCount } from './bench-harness';
import { LAMBDA_FUNCTION_NAME, newPayload } from './bench-redis';

/**
 * What a user compares: whole SQS Lambda batches, end to end, ours beside Powertools'. Each
 * invocation is a 10-record batch of `{ type, id, orderId, amount }` bodies, 8 invocations in flight
 * in one process (8 sandboxes' worth of work on one event loop), no-op handlers, one private Redis
 * started for the run (no persistence, nothing else on it).
 *
 * - ours: `createSqsLambdaHandler` over `@SqsMessageHandler` + `@Idempotent()` with
 *   `RedisIdempotencyStore` (ioredis, `recommendedIoRedisOptions`): decode, validate
 *   (class-validator), route, claim, run, complete, partial batch response;
 * - Powertools: `processPartialResponse` + `BatchProcessor` (records in parallel, its default), each
 *   record's body `JSON.parse`d and checked by a zod schema, then `makeIdempotent` (key `id`) with
 *   `CachePersistenceLayer` on `@redis/client`, as its documentation composes them;
 * - first sightings (every record new: claim, run, complete) and duplicates (every record completed
 *   before the measurement: one claim attempt, acked);
 * - for scale, the same Lambda handler without `@Idempotent()`, and with `@Idempotent()` on the
 *   in-memory store.
 */

/** The app of the `@Idempotent()` cases: the no-op idempotent handler on `store`. */
export function idempotentApp(store: IdempotencyStore) {
  @Module({
    imports: [IdempotencyModule.forRoot({ store }), SqsModule.forRoot({})],
    providers: [IdempotentOrdersHandler],
  })
  class IdempotentApp {}
  return IdempotentApp;
}

@Module({ imports: [SqsModule.forRoot({})], providers: [PlainOrdersHandler] })
class PlainApp {}

/** Powertools' side of the same record: the body as zod checks it. */
const OrderCreatedSchema = z.object({
  type: z.literal('order_created'),
  id: z.string(),
  orderId: z.string(),
  amount: z.number().int().min(1),
});

export const BATCH_SIZE = 10;
/** Invocations in flight (`BENCH_IN_FLIGHT`, default 8): 1 measures a sandbox that takes one batch at a time. */
export const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 8);
const TTL_SECONDS = 86_400;

/** The cases, in the order they are shown. */
export const LAMBDA_BATCH_CASES = [
  'oursFirst',
  'powertoolsFirst',
  'oursDuplicates',
  'powertoolsDuplicates',
  'plain',
  'inMemoryFirst',
] as const;
export type LambdaBatchCase = (typeof LAMBDA_BATCH_CASES)[number];
export type LambdaBatchResults = Record<LambdaBatchCase, Result>;

/** An invocation: one SQS event in, its partial batch response's failures out. */
export type Invoke = (event: SqsLambdaEvent) => Promise<unknown[]>;

/** Every case's invocation, over one ioredis and one @redis/client connection to `redisUrl`. */
export interface LambdaBatchInvokers {
  invokers: Record<LambdaBatchCase, Invoke>;
  /** Empties the Redis database and the in-memory store the cases use. */
  flush(): Promise<unknown>;
  close(): Promise<void>;
}

export async function lambdaBatchInvokers(redisUrl: string): Promise<LambdaBatchInvokers> {
  // As on Lambda: the service identity of the keys (ours) and the key prefix (Powertools).
  process.env.AWS_LAMBDA_FUNCTION_NAME = LAMBDA_FUNCTION_NAME;
  const ioredis = new Redis(redisUrl, recommendedIoRedisOptions);
  const nodeRedis = createClient({ url: redisUrl });
  await nodeRedis.connect();
  const quiet = { nestOptions: { logger: false as const } };
  const ours = createSqsLambdaHandler(
    idempotentApp(new RedisIdempotencyStore(ioredis, { serverCheck: 'off' })),
    quiet,
  );
  const plain = createSqsLambdaHandler(PlainApp, quiet);
  const inMemoryStore = new InMemoryIdempotencyStore({ maxKeys: Infinity });
  const inMemory = createSqsLambdaHandler(idempotentApp(inMemoryStore), quiet);
  // Every invocation starts with 30 s left, as on Lambda and as Powertools' side below. One context
  // built once ran out 30 s into the run: every later invocation then had no time left, and its
  // leases the 1 s floor.
  const context = { ...buildLambdaContext(30_000), getRemainingTimeInMillis: () => 30_000 };
  const viaNest =
    (handler: typeof ours): Invoke =>
    async (event) =>
      (await handler(event, context)).batchItemFailures;
  const powertools = powertoolsInvoke(new CachePersistenceLayer({ client: nodeRedis }));
  await Promise.all([ours, plain, inMemory].map((handler) => handler.getApp()));
  return {
    invokers: {
      oursFirst: viaNest(ours),
      powertoolsFirst: powertools,
      oursDuplicates: viaNest(ours),
      powertoolsDuplicates: powertools,
      plain: viaNest(plain),
      inMemoryFirst: viaNest(inMemory),
    },
    // Both stores start every round empty: a store left holding the keys of earlier rounds makes
    // every garbage collection mark them again (seen: 37% of the in-memory case's CPU in GC).
    flush: () => {
      inMemoryStore.clear();
      return ioredis.flushdb();
    },
    async close() {
      await Promise.all([ours, plain, inMemory].map((handler) => handler.close()));
      await ioredis.quit();
      await nodeRedis.quit();
    },
  };
}

/** `count` fresh 10-record events (every record a first sighting until handled). */
export function freshEvents(count: number): SqsLambdaEvent[] {
  return Array.from({ length: count }, () =>
    buildSqsEvent(
      Array.from({ length: BATCH_SIZE }, () => buildSqsRecord({ type: 'order_created', ...newPayload() })),
    ),
  );
}

export async function benchLambdaBatches(
  redisUrl: string,
  { batches, rounds, warmups }: { batches: number; rounds: number; warmups: number },
  log: (line: string) => void,
): Promise<LambdaBatchResults> {
  const { invokers, flush, close } = await lambdaBatchInvokers(redisUrl);
  try {
    const cases = LAMBDA_BATCH_CASES.map((id) =>
      lambdaBatchCase(id, invokers[id], {
        duplicates: id.endsWith('Duplicates'),
        batches,
        inFlight: IN_FLIGHT,
        flush,
      }),
    );
    const results = await runRounds(cases, {
      rounds,
      warmups,
      onRound: (round) => log(round < 0 ? '  warm-up round' : `  round ${round + 1}/${rounds}`),
      paceCheck: true,
    });
    return Object.fromEntries(LAMBDA_BATCH_CASES.map((id) => [id, results.get(id)!])) as LambdaBatchResults;
  } finally {
    await close();
  }
}

/** How a whole-batch case runs: its kind, its size, and how its stores are emptied before each round. */
export interface LambdaBatchCasePlan {
  /** Every measured record a duplicate of a completed one (completed, untimed, before the measurement). */
  duplicates: boolean;
  batches: number;
  inFlight: number;
  /** Empties the stores the case uses (a private server holds nothing else). */
  flush(): Promise<unknown>;
  /** Untimed set-up before each measurement, after the flush (a switch the case needs on). */
  before?(): void;
}

/** One whole-batch case: `batches` fresh 10-record events, `inFlight` at a time, after settling. */
export function lambdaBatchCase(id: string, invoke: Invoke, plan: LambdaBatchCasePlan): BenchCase {
  const { duplicates, batches, inFlight } = plan;
  let events: SqsLambdaEvent[] = [];
  let settling: SqsLambdaEvent[] = [];
  const invokeAll = (batch: SqsLambdaEvent[]) => measureOps((i) => invoke(batch[i]), batch.length, inFlight);
  return {
    id,
    async prepare() {
      plan.before?.();
      // Every round starts alike: empty stores.
      await plan.flush();
      events = freshEvents(batches);
      settling = freshEvents(settleCount(batches));
      // Completed once, untimed: every record measured is then a duplicate of a completed one.
      if (duplicates) await Promise.all([invokeAll(events), invokeAll(settling)]);
    },
    async settle() {
      await invokeAll(settling);
    },
    async measure() {
      const perBatch = await measureOps(
        async (i) => {
          const failures = await invoke(events[i]);
          if (failures.length > 0) throw new Error(`${id}: ${failures.length} records failed`);
        },
        batches,
        inFlight,
      );
      // Drop this case's events: the next case is measured with only its own input live.
      events = [];
      settling = [];
      return { perSecond: perBatch.perSecond * BATCH_SIZE, cpuMicros: perBatch.cpuMicros / BATCH_SIZE };
    },
  };
}

/**
 * Powertools' Lambda handler as its documentation composes batch processing and idempotency, with
 * the body parsed and checked before the claim (as ours: invalid records never claim a key). A
 * `BatchProcessor` holds the records of the batch it is processing, so each sandbox has its own:
 * one per invocation in flight.
 */
function powertoolsInvoke(persistenceStore: CachePersistenceLayer): Invoke {
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'id', expiresAfterSeconds: TTL_SECONDS });
  const processOrder = makeIdempotent(async (_order: z.infer<typeof OrderCreatedSchema>) => {}, {
    persistenceStore,
    config,
  });
  const recordHandler = async (record: SQSRecord) =>
    processOrder(OrderCreatedSchema.parse(JSON.parse(record.body)));
  const idle: BatchProcessor[] = Array.from({ length: IN_FLIGHT }, () => new BatchProcessor(EventType.SQS));
  const context = { getRemainingTimeInMillis: () => 30_000 } as Context;
  return async (event) => {
    const processor = idle.pop() ?? new BatchProcessor(EventType.SQS);
    try {
      config.registerLambdaContext(context);
      const response = await processPartialResponse(event as unknown as SQSEvent, recordHandler, processor, {
        context,
      });
      return response.batchItemFailures;
    } finally {
      idle.push(processor);
    }
  };
}
