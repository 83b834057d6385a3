import { loadavg } from 'node:os';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode, W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { Redis } from 'ioredis';
import { createSqsLambdaHandler } from '../lib';
import { RedisIdempotencyStore, recommendedIoRedisOptions } from '../lib/stores/redis';
import { buildLambdaContext } from '../lib/testing';
import { startRedisServer } from '../test/support/redis-server';
import { BenchCase, formatRate, Result, runRounds } from './bench-harness';
import { LAMBDA_FUNCTION_NAME } from './bench-redis';
import { BATCH_SIZE, freshEvents, idempotentApp, Invoke, lambdaBatchCase } from './lambda-batch.bench';
import { describePaceTally } from './machine-pace';

/**
 * `BENCH_ONLY=tracing npm run bench` (and a section of the full run, in a process of its own): what a
 * record's span costs (issue 52 item 5). The whole-batch bench's `@Idempotent()` handler on a private
 * Redis, first sightings (10-record batches, no-op handler), booted twice in one process: once before
 * any tracer provider is registered (tracing off: nothing of it loaded), once after an SDK registered
 * one with a `BatchSpanProcessor` (the production setting) whose exporter drops what it gets, with
 * the async-hooks context manager and the W3C propagator. Cases interleaved in rounds, medians, with 8
 * invocations in flight and with 1. The goal: at most 25% more CPU per record with tracing on.
 */

export interface TracingRow {
  inFlight: number;
  off: Result;
  on: Result;
}

export interface TracingResults {
  rows: TracingRow[];
  batches: number;
  rounds: number;
  /** Spans the exporter received (proof the traced app made them). */
  exported: number;
  load: number[][];
}

/** An exporter that counts and drops: the cost measured is the span's, not a network's. */
class CountingExporter implements SpanExporter {
  count = 0;
  export(spans: Parameters<SpanExporter['export']>[0], done: Parameters<SpanExporter['export']>[1]): void {
    this.count += spans.length;
    done({ code: ExportResultCode.SUCCESS });
  }
  async shutdown(): Promise<void> {}
}

export async function benchTracing(
  plan: { batches: number; rounds: number; warmups: number },
  log: (line: string) => void,
): Promise<TracingResults> {
  const loadBefore = loadavg();
  process.env.AWS_LAMBDA_FUNCTION_NAME = LAMBDA_FUNCTION_NAME;
  const redis = await startRedisServer();
  const ioredis = new Redis(redis.url, recommendedIoRedisOptions);
  const lambdaContext = { ...buildLambdaContext(30_000), getRemainingTimeInMillis: () => 30_000 };
  const handlers: Array<ReturnType<typeof createSqsLambdaHandler>> = [];
  const exporter = new CountingExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });

  const boot = async (): Promise<Invoke> => {
    const store = new RedisIdempotencyStore(ioredis, { serverCheck: 'off' });
    const handler = createSqsLambdaHandler(idempotentApp(store), { nestOptions: { logger: false } });
    handlers.push(handler);
    const { batchItemFailures } = await handler(freshEvents(1)[0], lambdaContext);
    if (batchItemFailures.length > 0) throw new Error('tracing bench: the first batch failed');
    return async (event) => (await handler(event, lambdaContext)).batchItemFailures;
  };
  const rows: TracingRow[] = [];
  try {
    // Tracing is decided at boot: this app sees no provider, the next one does.
    const off = await boot();
    trace.setGlobalTracerProvider(provider);
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const on = await boot();
    await provider.forceFlush();
    if (exporter.count === 0) throw new Error('tracing bench: the traced app made no span');

    for (const inFlight of [8, 1]) {
      const batches = inFlight === 1 ? Math.ceil(plan.batches / 3) : plan.batches;
      const flush = () => ioredis.flushdb();
      const cases: BenchCase[] = [
        lambdaBatchCase('off', off, { duplicates: false, batches, inFlight, flush }),
        lambdaBatchCase('on', on, { duplicates: false, batches, inFlight, flush }),
      ];
      log(`Tracing, ${inFlight} invocation(s) in flight`);
      const results = await runRounds(cases, {
        ...plan,
        onRound: (round) => log(round < 0 ? '  warm-up round' : `  round ${round + 1}/${plan.rounds}`),
        paceCheck: true,
      });
      rows.push({ inFlight, off: results.get('off')!, on: results.get('on')! });
    }
    await provider.forceFlush();
  } finally {
    await Promise.all(handlers.map((handler) => handler.close()));
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
    await ioredis.quit();
    await redis.stop();
  }
  return {
    rows,
    batches: plan.batches,
    rounds: plan.rounds,
    exported: exporter.count,
    load: [loadBefore, loadavg()],
  };
}

/** The section: per concurrency, records/s and CPU per record with tracing off and on. */
export function renderTracingSection(results: TracingResults): string[] {
  const load = (values: number[]) => values.map((value) => value.toFixed(1)).join(' / ');
  const out: string[] = [
    '## Tracing: what a span per record costs',
    '',
    `The whole-batch bench's \`@Idempotent()\` handler on a private Redis, first sightings (${BATCH_SIZE}-record ` +
      'batches, no-op handler), booted before any tracer provider was registered (off) and after an SDK ' +
      'registered one with a `BatchSpanProcessor` whose exporter drops the spans (on: a `process` span per ' +
      `record with its claim event). ${results.batches.toLocaleString('en-US')} invocations per measurement with ` +
      `8 in flight, a third of that with 1; medians of ${results.rounds} rounds, cases interleaved; ` +
      `${results.exported.toLocaleString('en-US')} spans exported. Goal: at most +25% CPU per record. Load ` +
      `average ${load(results.load[0])} when the section started, ${load(results.load[1])} when it ended.`,
    '',
    '| in flight | records/s off | records/s on | CPU µs/record off | CPU µs/record on | CPU cost |',
    '|---:|---:|---:|---:|---:|---:|',
  ];
  for (const { inFlight, off, on } of results.rows) {
    const cost = (on.cpuMicros / off.cpuMicros - 1) * 100;
    out.push(
      `| ${inFlight} | ${formatRate(off.perSecond)} | ${formatRate(on.perSecond)} | ${off.cpuMicros.toFixed(1)} | ` +
        `${on.cpuMicros.toFixed(1)} | ${cost >= 0 ? '+' : ''}${cost.toFixed(1)}% |`,
    );
  }
  out.push('', describePaceTally(), '');
  return out;
}
