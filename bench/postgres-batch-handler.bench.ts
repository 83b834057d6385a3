import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { CachePersistenceLayer } from '@aws-lambda-powertools/idempotency/cache';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { Inject, Injectable, Module } from '@nestjs/common';
import { createClient } from '@redis/client';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { Redis } from 'ioredis';
import type { Pool } from 'pg';
import { z } from 'zod';
import {
  createSqsLambdaHandler,
  Idempotent,
  IdempotencyModule,
  SqsBatchHandler,
  SqsMessageHandler,
  SqsModule,
} from '../lib';
import { RedisIdempotencyStore, recommendedIoRedisOptions } from '../lib/stores/redis';
import { buildLambdaContext } from '../lib/testing';
import { startRedisServer } from '../test/support/redis-server';
import { formatRate, formatRatio, Result, runRounds } from './bench-harness';
import { OrderCreated } from './bench-orders';
import { LAMBDA_FUNCTION_NAME } from './bench-redis';
import { BATCH_SIZE, IN_FLIGHT, Invoke, lambdaBatchCase } from './lambda-batch.bench';
import { openBenchDatabase } from './postgres-store.bench';

/**
 * Batch handlers (`@SqsBatchHandler()`, issue 53) where they pay: handlers that write each event as a
 * row in PostgreSQL, fed 10-record Lambda batches, `IN_FLIGHT` invocations at a time. Three ways, each
 * with its idempotency keys on one private Redis:
 *
 * - per record: `@SqsMessageHandler()` + `@Idempotent()` on `RedisIdempotencyStore`, one `INSERT` per
 *   record (the claims and completions of a batch already go out as one call each, the store batcher);
 * - batch: `@SqsBatchHandler()` + `@Idempotent()` on the same store, one `INSERT ... SELECT FROM unnest(...)`
 *   of the batch's new events;
 * - Powertools: `processPartialResponse` + `BatchProcessor`, each body parsed and checked by zod, then
 *   `makeIdempotent` on `CachePersistenceLayer` (`@redis/client`), one `INSERT` per record.
 *
 * Every `INSERT` is `ON CONFLICT DO NOTHING` on the row's primary key, one `pg` pool of 10 connections.
 * CPU is this process's per row (Postgres's and Redis's own CPU are not in it).
 */

const BENCH_POOL = Symbol('BENCH_POOL');
const TTL_SECONDS = 86_400;
const INSERT_ONE =
  'INSERT INTO bench_batch_rows (id, order_id, amount) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING';
const INSERT_MANY =
  'INSERT INTO bench_batch_rows (id, order_id, amount) ' +
  'SELECT * FROM unnest($1::text[], $2::text[], $3::int[]) ON CONFLICT DO NOTHING';

@Injectable()
class PerRecordRowsHandler {
  constructor(@Inject(BENCH_POOL) private readonly pool: Pool) {}

  @SqsMessageHandler(OrderCreated)
  @Idempotent()
  async onOrder(event: OrderCreated): Promise<void> {
    await this.pool.query(INSERT_ONE, [event.id, event.orderId, event.amount]);
  }
}

@Injectable()
class BatchRowsHandler {
  constructor(@Inject(BENCH_POOL) private readonly pool: Pool) {}

  @SqsBatchHandler(OrderCreated)
  @Idempotent()
  async onOrders(events: OrderCreated[]): Promise<void> {
    await this.pool.query(INSERT_MANY, [
      events.map((event) => event.id),
      events.map((event) => event.orderId),
      events.map((event) => event.amount),
    ]);
  }
}

function appOf(handler: typeof PerRecordRowsHandler | typeof BatchRowsHandler, redis: Redis, pool: Pool) {
  @Module({
    imports: [
      IdempotencyModule.forRoot({ store: new RedisIdempotencyStore(redis, { serverCheck: 'off' }) }),
      SqsModule.forRoot({}),
    ],
    providers: [handler, { provide: BENCH_POOL, useValue: pool }],
  })
  class RowsApp {}
  return RowsApp;
}

const OrderCreatedSchema = z.object({
  type: z.literal('order_created'),
  id: z.string(),
  orderId: z.string(),
  amount: z.number().int().min(1),
});

/** Powertools' handler as its documentation composes batch processing and idempotency, one INSERT per record. */
function powertoolsInvoke(persistenceStore: CachePersistenceLayer, pool: Pool): Invoke {
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'id', expiresAfterSeconds: TTL_SECONDS });
  const processOrder = makeIdempotent(
    async (order: z.infer<typeof OrderCreatedSchema>) =>
      void (await pool.query(INSERT_ONE, [order.id, order.orderId, order.amount])),
    { persistenceStore, config },
  );
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

export const BATCH_HANDLER_CASES = [
  'perRecordFirst',
  'batchFirst',
  'powertoolsFirst',
  'perRecordDuplicates',
  'batchDuplicates',
  'powertoolsDuplicates',
] as const;
export type BatchHandlerCase = (typeof BATCH_HANDLER_CASES)[number];
export type BatchHandlerResults = Record<BatchHandlerCase, Result>;

export async function benchBatchHandlers(
  plan: { batches: number; rounds: number; warmups: number },
  log: (line: string) => void,
): Promise<BatchHandlerResults> {
  process.env.AWS_LAMBDA_FUNCTION_NAME = LAMBDA_FUNCTION_NAME;
  const redisServer = await startRedisServer();
  const database = await openBenchDatabase();
  const pool = database.pool();
  const ioredis = new Redis(redisServer.url, recommendedIoRedisOptions);
  const nodeRedis = createClient({ url: redisServer.url });
  await nodeRedis.connect();
  const quiet = { nestOptions: { logger: false as const } };
  const perRecord = createSqsLambdaHandler(appOf(PerRecordRowsHandler, ioredis, pool), quiet);
  const batch = createSqsLambdaHandler(appOf(BatchRowsHandler, ioredis, pool), quiet);
  try {
    await pool.query(
      'CREATE TABLE bench_batch_rows (id text PRIMARY KEY, order_id text NOT NULL, amount int NOT NULL)',
    );
    await Promise.all([perRecord.getApp(), batch.getApp()]);
    const context = { ...buildLambdaContext(30_000), getRemainingTimeInMillis: () => 30_000 };
    const viaNest =
      (handler: typeof perRecord): Invoke =>
      async (event) =>
        (await handler(event, context)).batchItemFailures;
    const powertools = powertoolsInvoke(new CachePersistenceLayer({ client: nodeRedis }), pool);
    const invokers: Record<BatchHandlerCase, Invoke> = {
      perRecordFirst: viaNest(perRecord),
      batchFirst: viaNest(batch),
      powertoolsFirst: powertools,
      perRecordDuplicates: viaNest(perRecord),
      batchDuplicates: viaNest(batch),
      powertoolsDuplicates: powertools,
    };
    const flush = async () => {
      await ioredis.flushdb();
      await pool.query('TRUNCATE bench_batch_rows');
    };
    const cases = BATCH_HANDLER_CASES.map((id) =>
      lambdaBatchCase(id, invokers[id], {
        duplicates: id.endsWith('Duplicates'),
        batches: plan.batches,
        inFlight: IN_FLIGHT,
        flush,
      }),
    );
    const results = await runRounds(cases, {
      rounds: plan.rounds,
      warmups: plan.warmups,
      onRound: (round) => log(round < 0 ? '  warm-up round' : `  round ${round + 1}/${plan.rounds}`),
    });
    return Object.fromEntries(BATCH_HANDLER_CASES.map((id) => [id, results.get(id)!])) as BatchHandlerResults;
  } finally {
    await Promise.all([perRecord.close(), batch.close()]);
    await ioredis.quit();
    await nodeRedis.quit();
    await database.drop();
    await redisServer.stop();
  }
}

/** The report's section. */
export function renderBatchHandlersSection(
  results: BatchHandlerResults,
  plan: { batches: number },
): string[] {
  const out = ['## Batch handlers: 10-record batches written to Postgres', ''];
  out.push(
    `${plan.batches.toLocaleString('en-US')} Lambda batches of ${BATCH_SIZE} records a round, ${IN_FLIGHT} invocations ` +
      'in flight; each event becomes a row (`INSERT ... ON CONFLICT DO NOTHING`, one `pg` pool of 10), its ' +
      'idempotency key on a private Redis. Per record: `@SqsMessageHandler()` + `@Idempotent()`, one INSERT per ' +
      "record. Batch: `@SqsBatchHandler()` + `@Idempotent()`, one INSERT of the batch's new events (`unnest`). " +
      'Powertools: `BatchProcessor` + `makeIdempotent` on `CachePersistenceLayer`, one INSERT per record. CPU: this ' +
      "process per row (not the servers').",
    '',
  );
  out.push('| case | rows/s | CPU µs/row | rows/s vs per record | CPU vs per record |');
  out.push('|---|---:|---:|---:|---:|');
  const row = (label: string, result: Result, base: Result) =>
    `| ${label} | ${formatRate(result.perSecond)} | ${result.cpuMicros.toFixed(1)} | ` +
    `${formatRatio(result.perSecond / base.perSecond)} | ${formatRatio(result.cpuMicros / base.cpuMicros)} |`;
  for (const mode of ['First', 'Duplicates'] as const) {
    const base = results[`perRecord${mode}`];
    const label = mode === 'First' ? 'first sightings' : 'duplicates';
    out.push(row(`per record, ${label}`, base, base));
    out.push(row(`batch, ${label}`, results[`batch${mode}`], base));
    out.push(row(`Powertools, ${label}`, results[`powertools${mode}`], base));
  }
  const ratio = results.batchFirst.perSecond / results.perRecordFirst.perSecond;
  out.push(
    '',
    `Goal (issue 53): the batch handler at least 3x the per-record handler on first sightings: ${formatRatio(ratio)} ` +
      `(${ratio >= 3 ? 'met' : 'not met'}).`,
    '',
  );
  return out;
}
