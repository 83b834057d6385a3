import { loadavg } from 'node:os';
import { startRedisServer } from '../test/support/redis-server';
import { formatRate, formatRatio, Result } from './bench-harness';
import { describePaceTally } from './machine-pace';
import { BATCH_SIZE, benchLambdaBatches, IN_FLIGHT, LambdaBatchResults } from './lambda-batch.bench';
import { benchPollingHost, PollingResults, startFauxqsProcess } from './polling-host.bench';
import { benchStoreBatches, STORE_BATCH_SHAPE, StoreBatchResults } from './store-batch.bench';

/**
 * The sections of `npm run bench` that measure what a user feels: whole Lambda batches (ours beside
 * Powertools') and the polling host (beside a bare sqs-consumer), each on private servers the bench
 * starts (a redis-server with no persistence, fauxqs in a process of its own); and the batch store
 * methods at store level, which the pipeline will use. Also run alone, as
 * `BENCH_ONLY=whole-batch npm run bench`.
 */

export interface WholeBatchPlan {
  /** Lambda invocations (10-record batches) per measurement. */
  batches: number;
  /** Messages drained per polling measurement. */
  pollingMessages: number;
  rounds: number;
  warmups: number;
}

/** Targets of issue 15, as ratios of records/s measured side by side in one run. */
const TARGETS = {
  firstVsPowertools: 2,
  duplicatesVsPowertools: 4,
  inMemoryVsPlain: 0.7,
  pollingVsSqsConsumer: 0.8,
};

export async function runWholeBatchSections(
  plan: WholeBatchPlan,
  log: (line: string) => void,
): Promise<string[]> {
  const loadBefore = loadavg();
  const redis = await startRedisServer();
  let lambda: LambdaBatchResults;
  let stores: StoreBatchResults;
  try {
    log(
      `Whole Lambda batches: ${BATCH_SIZE} records each, ${IN_FLIGHT} invocations in flight, a private Redis`,
    );
    lambda = await benchLambdaBatches(redis.url, plan, log);
    log('Batch store methods: 10 unique keys claimed and completed per batch');
    stores = await benchStoreBatches(redis.url, plan, log);
  } finally {
    await redis.stop();
  }
  const fauxqs = await startFauxqsProcess();
  let polling: PollingResults;
  try {
    log('Polling host on fauxqs: SqsModule vs a bare sqs-consumer');
    polling = await benchPollingHost(
      fauxqs.endpoint,
      { messages: plan.pollingMessages, rounds: plan.rounds, warmups: plan.warmups },
      log,
    );
  } finally {
    await fauxqs.stop();
  }
  return renderWholeBatchSections(lambda, polling, stores, plan, [loadBefore, loadavg()]);
}

const load = (values: number[]) => values.map((value) => value.toFixed(1)).join(' / ');

export function renderWholeBatchSections(
  lambda: LambdaBatchResults,
  polling: PollingResults,
  stores: StoreBatchResults,
  plan: WholeBatchPlan,
  [loadBefore, loadAfter]: number[][],
): string[] {
  const out: string[] = [];
  const table = (header: string[], align: string[], rows: string[][]) =>
    out.push(
      `| ${header.join(' | ')} |`,
      `|${align.join('|')}|`,
      ...rows.map((row) => `| ${row.join(' | ')} |`),
      '',
    );
  // CPU seconds per wall second: above 1 when V8's helper threads work on the second core.
  const coresBusy = (result: Result) => ((result.perSecond * result.cpuMicros) / 1e6).toFixed(2);
  const row = (label: string, result: Result, versus?: Result) => [
    label,
    formatRate(result.perSecond),
    result.cpuMicros.toFixed(1),
    versus ? formatRatio(result.perSecond / versus.perSecond) : '',
    versus ? formatRatio(result.cpuMicros / versus.cpuMicros) : '',
  ];

  out.push('## Whole Lambda batches, ours beside Powertools', '');
  out.push(
    `${plan.batches.toLocaleString('en-US')} invocations per measurement, each a ${BATCH_SIZE}-record SQS batch ` +
      `(\`{ type, id, orderId, amount }\`), ${IN_FLIGHT} invocations in flight in one process, no-op handlers, ` +
      `a private redis-server (no persistence) started for the run; medians of ${plan.rounds} rounds after ` +
      `${plan.warmups} warm-up, the cases interleaved. Load average ${load(loadBefore)} when the section started, ` +
      `${load(loadAfter)} when it ended (a shared machine: CPU µs per record is the steadier figure).`,
    '',
    '- ours: `createSqsLambdaHandler` over `@SqsMessageHandler` + `@Idempotent()`, `RedisIdempotencyStore` on ioredis ' +
      '(`recommendedIoRedisOptions`): decode, class-validator, route, claim, run, complete, partial batch response.',
    '- Powertools: `processPartialResponse` + `BatchProcessor` (records in parallel), each body `JSON.parse`d and ' +
      'checked by a zod schema, then `makeIdempotent` (key `id`) on `CachePersistenceLayer` over `@redis/client`.',
    '- *first sightings*: every record new (claim, run, complete); *duplicates*: every record completed before the ' +
      'measurement (one claim attempt, acked).',
    '',
  );
  table(
    ['case', 'records/s', 'CPU µs/record', 'records/s vs', 'CPU vs'],
    ['---', '---:', '---:', '---:', '---:'],
    [
      row('ours, first sightings', lambda.oursFirst, lambda.powertoolsFirst),
      row('Powertools, first sightings', lambda.powertoolsFirst),
      row('ours, duplicates', lambda.oursDuplicates, lambda.powertoolsDuplicates),
      row('Powertools, duplicates', lambda.powertoolsDuplicates),
      row('`@SqsMessageHandler` without `@Idempotent()`', lambda.plain),
      row('`@Idempotent()`, in-memory store, first sightings', lambda.inMemoryFirst, lambda.plain),
    ],
  );
  out.push(
    '"vs": ours against Powertools in the same mode; the in-memory row against the handler without `@Idempotent()`.',
    '',
    'Where the time goes (profiles and measurements in bench/PROFILE.md): the invocations in flight reach their ' +
      'claims in the same turn, and the claims go out in script calls of 20 records, the first while the later ' +
      'records are still being decoded; a duplicate is its claim and the answer. In a CPU profile of the duplicates ' +
      'case the event loop was busy nine tenths of the time; of that, garbage collection took about a quarter, the ' +
      "socket writes of the script calls a fifth (system calls, costly on this machine's virtual CPUs), " +
      'class-validator a seventh (and half of the 16 KB allocated per record), `JSON.parse` 4%. A first sighting ' +
      'adds the completion call. The in-memory row adds the claim protocol and the store taking each new key to the ' +
      "handler without `@Idempotent()`; about half of the difference is V8's `Map` growing to tens of thousands " +
      'of string keys, which it rehashes at every doubling (PROFILE.md). Each case settles 1,000 invocations before its ' +
      "measurement: our three handlers share the library's code, which V8 re-optimizes for each case after another " +
      'ran; after 300, the row measured right after another of our cases ran 13-16% slow (PROFILE.md). Cores kept ' +
      'busy in this run: the handler without it ' +
      `${coresBusy(lambda.plain)}, the in-memory case ${coresBusy(lambda.inMemoryFirst)}.`,
    '',
  );

  out.push('## Polling host on fauxqs: SqsModule beside a bare sqs-consumer', '');
  out.push(
    `Each case drains ${plan.pollingMessages.toLocaleString('en-US')} messages from its own standard queue on one ` +
      `fauxqs (a process of its own), batch size 10, long poll 1 s, one poller; timed from start until the last ` +
      'record is handled. The bare SDK loop (receive 10, `JSON.parse`, `DeleteMessageBatch`) is the ceiling fauxqs ' +
      'sets for one poller. CPU is this process only (the emulator runs elsewhere).',
    '',
  );
  table(
    ['case', 'records/s', 'CPU µs/record', 'records/s vs sqs-consumer', 'CPU vs'],
    ['---', '---:', '---:', '---:', '---:'],
    [
      row('`SqsModule`, no-op handler', polling.sqsModule, polling.sqsConsumer),
      row('`SqsModule`, `@Idempotent()` (in-memory)', polling.sqsModuleIdempotent, polling.sqsConsumer),
      row('bare sqs-consumer batch handler', polling.sqsConsumer),
      row('bare SDK loop (the emulator’s ceiling)', polling.sdkLoop, polling.sqsConsumer),
    ],
  );

  out.push('## Batch store methods: a batch of 10 unique keys', '');
  out.push(
    `Each batch claims and completes ${STORE_BATCH_SHAPE.keysPerBatch} fresh keys, ${STORE_BATCH_SHAPE.inFlight} batches ` +
      `in flight, ${plan.batches.toLocaleString('en-US')} batches per measurement, on the same private Redis and ` +
      'ioredis settings (`recommendedIoRedisOptions`: auto-pipelining) for the three Redis rows. Rates and CPU are ' +
      'per key. The raw ioredis row is the floor: `SET NX PX` then `SET PX`, with no token check on completion.',
    '',
  );
  table(
    ['case', 'keys/s', 'CPU µs/key', 'keys/s vs raw ioredis', 'CPU vs'],
    ['---', '---:', '---:', '---:', '---:'],
    [
      row('`tryAcquireMany` + `markCompleteMany` (Redis)', stores.redisBatch, stores.rawIoredis),
      row(
        '10 × `tryAcquire` + 10 × `markComplete`, concurrent (Redis)',
        stores.redisSingles,
        stores.rawIoredis,
      ),
      row('raw ioredis, 10 × `SET NX PX` + 10 × `SET PX`', stores.rawIoredis),
      row('10 × `tryAcquire` + 10 × `markComplete` (in-memory)', stores.inMemorySingles),
    ],
  );

  out.push('### Targets of issue 15 (records/s ratios in this run)', '');
  const verdict = (what: string, ratio: number, target: number) =>
    out.push(
      `- ${what} ≥ ${target}x: ${formatRatio(ratio)} — ${ratio >= target ? 'met' : `**missed** by ${((1 - ratio / target) * 100).toFixed(0)}%`}`,
    );
  verdict(
    'ours / Powertools, first sightings',
    lambda.oursFirst.perSecond / lambda.powertoolsFirst.perSecond,
    TARGETS.firstVsPowertools,
  );
  verdict(
    'ours / Powertools, duplicates',
    lambda.oursDuplicates.perSecond / lambda.powertoolsDuplicates.perSecond,
    TARGETS.duplicatesVsPowertools,
  );
  verdict(
    '`@Idempotent()` in-memory / without',
    lambda.inMemoryFirst.perSecond / lambda.plain.perSecond,
    TARGETS.inMemoryVsPlain,
  );
  verdict(
    'store level, unique keys: batch methods / raw ioredis',
    stores.redisBatch.perSecond / stores.rawIoredis.perSecond,
    1,
  );
  verdict(
    '`SqsModule` / bare sqs-consumer',
    polling.sqsModule.perSecond / polling.sqsConsumer.perSecond,
    TARGETS.pollingVsSqsConsumer,
  );
  out.push('', `The Lambda batch and batch store sections: ${describePaceTally()}`, '');
  return out;
}
