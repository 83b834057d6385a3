import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { plainToInstance } from 'class-transformer';
import { Redis } from 'ioredis';
import { IdempotencyStore, InMemoryIdempotencyStore, createSqsLambdaHandler } from '../lib';
import { IdempotencyService } from '../lib/idempotency/idempotency.service';
import * as storeCallBatcher from '../lib/idempotency/store-call-batcher';
import { perKeyCalls } from '../lib/idempotency/store-calls';
import * as plainEventMapper from '../lib/sqs/routing/plain-event.mapper';
import * as directCall from '../lib/sqs/nest/sqs-direct-call';
import { RedisIdempotencyStore, recommendedIoRedisOptions } from '../lib/stores/redis';
import { buildLambdaContext } from '../lib/testing';
import { startRedisServer } from '../test/support/redis-server';
import { BenchCase, formatRate, Result, runRounds } from './bench-harness';
import { LAMBDA_FUNCTION_NAME } from './bench-redis';
import { BATCH_SIZE, freshEvents, idempotentApp, Invoke, lambdaBatchCase } from './lambda-batch.bench';
import { describePaceTally } from './machine-pace';

/**
 * `BENCH_ONLY=fast-paths npm run bench`: what each fast path kept beside a general one gains in the
 * whole Lambda batches (issue 35 item 3). Every case is the whole-batch bench's `@Idempotent()`
 * handler (10-record batches, no-op handler, in-memory store or a private Redis); one case per row
 * has every fast path on, each other case the same app with one path switched off, so the general
 * path runs instead. The switches are patches made here, around the boot of the app they apply to
 * (the library has no switch of its own): the library is the same code in every case.
 *
 * Measured with 8 invocations in flight (the whole-batch bench's setting, where invocations share
 * store calls) and with 1 (a Lambda sandbox runs one invocation at a time), cases interleaved in
 * rounds, medians.
 */

/** The fast paths measured, and what runs in their place when one is off. */
export const FAST_PATHS = {
  directCall: 'direct handler call → Nest’s interceptor pipeline',
  storeCallBatcher: 'store-call batcher → one store call per record',
  attemptTokens: 'counter tokens → `randomUUID()` per attempt',
  plainEventMapper: 'plain event mapper → class-transformer’s `plainToInstance`',
  unpipelinedRedis: 'unpipelined batch scripts → ioredis’s auto-pipeline',
} as const;
export type FastPath = keyof typeof FAST_PATHS;

type Row = 'inMemoryFirst' | 'redisFirst' | 'redisDuplicates';
const ROWS: Record<Row, { label: string; paths: FastPath[] }> = {
  inMemoryFirst: {
    label: 'in-memory store, first sightings',
    paths: ['directCall', 'attemptTokens', 'plainEventMapper'],
  },
  redisFirst: {
    label: 'Redis, first sightings',
    paths: ['directCall', 'storeCallBatcher', 'attemptTokens', 'plainEventMapper', 'unpipelinedRedis'],
  },
  redisDuplicates: {
    label: 'Redis, duplicates',
    paths: ['directCall', 'storeCallBatcher', 'attemptTokens', 'plainEventMapper', 'unpipelinedRedis'],
  },
};

/** One row at one concurrency: every path on, and each path off. */
export interface FastPathRow {
  row: Row;
  inFlight: number;
  on: Result;
  off: Partial<Record<FastPath, Result>>;
}

export interface FastPathResults {
  rows: FastPathRow[];
  batches: number;
  rounds: number;
  load: number[][];
}

/** Replaces `exports[name]` of a library module for the length of `run`, and counts the calls. */
async function patched<M extends object, K extends keyof M>(
  module: M,
  name: K,
  replacement: M[K],
  run: () => Promise<void>,
): Promise<number> {
  const original = module[name];
  let calls = 0;
  const counted = ((...args: unknown[]) => {
    calls++;
    return (replacement as (...args: unknown[]) => unknown)(...args);
  }) as M[K];
  Object.assign(module, { [name]: counted });
  try {
    await run();
  } finally {
    Object.assign(module, { [name]: original });
  }
  return calls;
}

const viaClassTransformer: typeof plainEventMapper.mapToEvent = (eventClass, payload, options) =>
  plainToInstance(eventClass, payload, options) as object;
const mapToEvent = plainEventMapper.mapToEvent;

interface Apps {
  invokers: Map<string, Invoke>;
  flush(): Promise<unknown>;
  close(): Promise<void>;
}

/** The apps of every case: per row, one with every path on and one per path switched off at boot. */
async function bootApps(redisUrl: string): Promise<Apps> {
  process.env.AWS_LAMBDA_FUNCTION_NAME = LAMBDA_FUNCTION_NAME;
  const ioredis = new Redis(redisUrl, recommendedIoRedisOptions);
  const memories: InMemoryIdempotencyStore[] = [];
  const handlers: Array<ReturnType<typeof createSqsLambdaHandler>> = [];
  const context = { ...buildLambdaContext(30_000), getRemainingTimeInMillis: () => 30_000 };
  const invokers = new Map<string, Invoke>();

  const boot = async (id: string, store: IdempotencyStore, off?: FastPath) => {
    const handler = createSqsLambdaHandler(idempotentApp(store), { nestOptions: { logger: false } });
    handlers.push(handler);
    // The handler's call path is chosen at its first record: boot, then one batch.
    const start = async () => {
      const { batchItemFailures } = await handler(freshEvents(1)[0], context);
      if (batchItemFailures.length > 0) throw new Error(`fast-paths bench: ${id} failed its first batch`);
    };
    let calls = 1;
    if (off === 'directCall') calls = await patched(directCall, 'directCallOf', () => undefined, start);
    else if (off === 'storeCallBatcher')
      calls = await patched(storeCallBatcher, 'storeCallsFor', perKeyCalls, start);
    else await start();
    if (calls === 0) throw new Error(`fast-paths bench: switching off ${off} patched nothing`);
    if (off === 'attemptTokens') {
      const service = (await handler.getApp()).get(IdempotencyService, { strict: false });
      Object.assign(service, { tokens: { next: randomUUID } });
    }
    invokers.set(id, async (event) => (await handler(event, context)).batchItemFailures);
  };

  const redisStore = (unpipelined = true) => {
    const store = new RedisIdempotencyStore(ioredis, { serverCheck: 'off' });
    // The store looks for its unpipelined sender at its first batch call; `null` means none.
    if (!unpipelined) Object.assign(store, { batchSender: null });
    return store;
  };
  const memory = () => {
    const store = new InMemoryIdempotencyStore({ maxKeys: Infinity });
    memories.push(store);
    return store;
  };
  for (const row of Object.keys(ROWS) as Row[]) {
    const store = () => (row === 'inMemoryFirst' ? memory() : redisStore());
    await boot(caseId(row, 'on'), store());
    for (const path of ROWS[row].paths) {
      // The mapper is switched per measurement (it is called per record, not bound at boot).
      if (path === 'plainEventMapper') continue;
      await boot(caseId(row, path), path === 'unpipelinedRedis' ? redisStore(false) : store(), path);
    }
  }
  return {
    invokers,
    flush: () => {
      for (const store of memories) store.clear();
      return ioredis.flushdb();
    },
    async close() {
      await Promise.all(handlers.map((handler) => handler.close()));
      await ioredis.quit();
    },
  };
}

const caseId = (row: Row, path: FastPath | 'on') => `${row}:${path}`;

export async function benchFastPaths(
  plan: { batches: number; rounds: number; warmups: number },
  log: (line: string) => void,
): Promise<FastPathResults> {
  const loadBefore = loadavg();
  const redis = await startRedisServer();
  const apps = await bootApps(redis.url).catch(async (error: unknown) => {
    await redis.stop();
    throw error;
  });
  const rows: FastPathRow[] = [];
  try {
    for (const inFlight of [8, 1]) {
      // One invocation at a time runs a tenth of the records a second: a third of the batches.
      const batches = inFlight === 1 ? Math.ceil(plan.batches / 3) : plan.batches;
      const cases: BenchCase[] = [];
      for (const row of Object.keys(ROWS) as Row[]) {
        for (const path of ['on', ...ROWS[row].paths] as Array<FastPath | 'on'>) {
          const invoke = apps.invokers.get(caseId(row, path === 'plainEventMapper' ? 'on' : path))!;
          cases.push(
            lambdaBatchCase(caseId(row, path), invoke, {
              duplicates: row === 'redisDuplicates',
              batches,
              inFlight,
              flush: apps.flush,
              // The mapper is called per record: switched for each measurement, not at boot.
              before: () =>
                Object.assign(plainEventMapper, {
                  mapToEvent: path === 'plainEventMapper' ? viaClassTransformer : mapToEvent,
                }),
            }),
          );
        }
      }
      log(`Fast paths, ${inFlight} invocation(s) in flight: ${cases.length} cases`);
      const results = await runRounds(cases, {
        ...plan,
        onRound: (round) => log(round < 0 ? '  warm-up round' : `  round ${round + 1}/${plan.rounds}`),
        paceCheck: true,
      });
      for (const row of Object.keys(ROWS) as Row[]) {
        const off: FastPathRow['off'] = {};
        for (const path of ROWS[row].paths) off[path] = results.get(caseId(row, path));
        rows.push({ row, inFlight, on: results.get(caseId(row, 'on'))!, off });
      }
    }
  } finally {
    Object.assign(plainEventMapper, { mapToEvent });
    await apps.close();
    await redis.stop();
  }
  return { rows, batches: plan.batches, rounds: plan.rounds, load: [loadBefore, loadavg()] };
}

/** The section: per row and concurrency, what each path gains (every path on against that one off). */
export function renderFastPathsSection(results: FastPathResults): string[] {
  const out: string[] = ['## Fast paths: what each gains in the whole Lambda batches', ''];
  const load = (values: number[]) => values.map((value) => value.toFixed(1)).join(' / ');
  out.push(
    `The whole-batch bench's \`@Idempotent()\` handler (${BATCH_SIZE}-record batches, no-op handler), every fast ` +
      `path on, against the same app with one path switched off (the general path runs in its place). ` +
      `${results.batches.toLocaleString('en-US')} invocations per measurement with 8 in flight, a third of that ` +
      `with 1; medians of ${results.rounds} rounds, cases interleaved. Gain: records/s with the path on over ` +
      `records/s with it off, minus one; CPU: µs a record off, then on. Load average ${load(results.load[0])} ` +
      `when the section started, ${load(results.load[1])} when it ended.`,
    '',
    '| fast path (→ what runs when it is off) | row | in flight | records/s on | records/s off | gain | CPU µs/record off → on |',
    '|---|---|---:|---:|---:|---:|---:|',
  );
  for (const { row, inFlight, on, off } of results.rows) {
    for (const [path, result] of Object.entries(off) as Array<[FastPath, Result]>) {
      const gain = (on.perSecond / result.perSecond - 1) * 100;
      out.push(
        `| ${FAST_PATHS[path]} | ${ROWS[row].label} | ${inFlight} | ${formatRate(on.perSecond)} | ` +
          `${formatRate(result.perSecond)} | ${gain >= 0 ? '+' : ''}${gain.toFixed(1)}% | ` +
          `${result.cpuMicros.toFixed(1)} → ${on.cpuMicros.toFixed(1)} |`,
      );
    }
  }
  out.push('', describePaceTally(), '');
  return out;
}
