import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynalite } from '../test/support/dynalite';
import { startRedisServer } from '../test/support/redis-server';
import { readmeBlocks } from '../test/support/readme-blocks';
import { formatRatio, median } from './bench-harness';

/**
 * Cold start: the time from a process's start to its first one-record SQS batch answered, as a
 * Lambda sandbox's first invocation feels it. Every contender is a Lambda handler module compiled
 * with tsc and bundled with esbuild exactly as the Lambda guide's `build:lambda` script says
 * (docs/hosts/lambda.md, "Bundling and deploying"), its bundle alone in a folder outside this
 * repository (as in /var/task: an external the bundle does not carry cannot be found there either).
 * Each run is a new `node` process that loads the bundle and invokes its handler once
 * (`cold-start/invoke-once.cjs`), timed from the spawn to the answer on its stdout; it reports its
 * CPU time and peak memory (maxRSS) with the answer.
 *
 * Contenders, on each store: ours (the Quick start app), Powertools (`BatchProcessor` +
 * `makeIdempotent`, zod), and the bare Nest floor (the same event, validation and handler method in a
 * Nest application context, no idempotency library; on a shared store, a claim written by hand).
 * Processes are started in turn, A B C A B C ..., after a warm-up run of each; a ratio is taken
 * within each round, so that a slower moment of this shared machine hits both sides of it alike.
 * Run alone: `BENCH_ONLY=cold-start npm run bench` (COLD_START_ROUNDS to change the rounds).
 *
 * Then the first batch after INIT (issue 51): the Quick start's bundle imported, and its first batch
 * timed alone (CPU and wall, from the call to the answer), invoked right after the import or after a
 * pause of COLD_START_PAUSE_MS (default 1,000) as when Lambda ran INIT before the first request; the
 * same with the boot left for the first invocation (`bootAtInit: false`, the behaviour before), for
 * scale. COLD_START_ONLY=first-batch runs only that case, COLD_START_ONLY=contenders only the first.
 */

const ROOT = join(__dirname, '..');
const GUIDE = join(ROOT, 'docs', 'hosts', 'lambda.md');
const TSC_OUT = join(ROOT, '.bench-tmp', 'cold-start', 'tsc');
const ANSWER_MARK = '@@cold-start-answer ';
const LAMBDA_FUNCTION_NAME = 'orders-consumer';

export const COLD_START_STORES = ['memory', 'redis', 'dynamodb'] as const;
export type ColdStartStore = (typeof COLD_START_STORES)[number];
export const COLD_START_CONTENDERS = ['ours', 'powertools', 'floor'] as const;
export type ColdStartContender = (typeof COLD_START_CONTENDERS)[number];

/** The handler module of each contender on each store (compiled paths under `cold-start/`). */
const ENTRIES: Record<ColdStartStore, Record<ColdStartContender, string>> = {
  memory: {
    ours: 'quick-start/lambda.js',
    powertools: 'powertools/powertools-memory.lambda.js',
    floor: 'floor/floor-memory.lambda.js',
  },
  redis: {
    ours: 'ours-redis.lambda.js',
    powertools: 'powertools/powertools-redis.lambda.js',
    floor: 'floor/floor-redis.lambda.js',
  },
  dynamodb: {
    ours: 'ours-dynamodb.lambda.js',
    powertools: 'powertools/powertools-dynamodb.lambda.js',
    floor: 'floor/floor-dynamodb.lambda.js',
  },
};

/** One process: wall milliseconds from spawn to answer, its own CPU milliseconds, its peak memory. */
export interface ColdStartRun {
  wallMs: number;
  cpuMs: number;
  peakMiB: number;
  /** The first batch alone: from the handler's call to its answer (a boot still under way counts in it). */
  firstBatch: { cpuMs: number; wallMs: number };
}

/**
 * The first batch after INIT: the Quick start booting at import (`init`) or on its first invocation
 * (`lazy`), invoked right after the import (`now`) or after a pause (`paused`).
 */
export const FIRST_BATCH_VARIANTS = ['init-now', 'init-paused', 'lazy-now', 'lazy-paused'] as const;
export type FirstBatchVariant = (typeof FIRST_BATCH_VARIANTS)[number];

/** The bundle of each boot mode (compiled paths under `cold-start/`). */
const FIRST_BATCH_ENTRIES = { init: 'quick-start/lambda.js', lazy: 'quick-start-lazy.lambda.js' };

export interface FirstBatchResults {
  rounds: number;
  pauseMs: number;
  runs: Record<FirstBatchVariant, ColdStartRun[]>;
  load: [number[], number[]];
}

export interface ColdStartResults {
  rounds: number;
  esbuildFlags: string[];
  /** Bundle size in bytes, by store and contender. */
  bytes: Record<ColdStartStore, Record<ColdStartContender, number>>;
  /** The contenders' runs; absent with COLD_START_ONLY=first-batch. */
  runs?: Record<ColdStartStore, Record<ColdStartContender, ColdStartRun[]>>;
  load: [number[], number[]];
  /** The first batch after INIT; absent with COLD_START_ONLY=contenders. */
  firstBatch?: FirstBatchResults;
}

/**
 * The esbuild flags of the Lambda guide's `build:lambda` script (the block marked
 * `recipe: lambda/package.json`), without its entry point and output file.
 */
export function lambdaGuideEsbuildFlags(markdown = readFileSync(GUIDE, 'utf8')): string[] {
  const block = readmeBlocks(markdown).find((candidate) =>
    candidate.markers.recipes.includes('lambda/package.json'),
  );
  if (!block) throw new Error(`${GUIDE} has no block marked recipe: lambda/package.json`);
  const script = (JSON.parse(block.code) as { scripts?: Record<string, string> }).scripts?.['build:lambda'];
  const esbuild = script
    ?.split('&&')
    .map((part) => part.trim().split(/\s+/))
    .find((words) => words[0] === 'esbuild');
  if (!esbuild) throw new Error(`the build:lambda script of ${GUIDE} runs no esbuild`);
  return esbuild.slice(1).filter((word) => word.startsWith('--') && !word.startsWith('--outfile='));
}

/** Builds the package, compiles the apps with tsc and bundles each with the guide's flags. */
function bundleContenders(
  esbuildFlags: string[],
  log: (line: string) => void,
): { dir: string; bytes: ColdStartResults['bytes'] } {
  log('  npm run build, tsc, esbuild (the Lambda guide’s flags)');
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'ignore' });
  rmSync(TSC_OUT, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(__dirname, 'cold-start')],
    { cwd: ROOT, stdio: 'inherit' },
  );
  const dir = mkdtempSync(join(tmpdir(), 'cold-start-'));
  const bytes = {} as ColdStartResults['bytes'];
  for (const store of COLD_START_STORES) {
    bytes[store] = {} as Record<ColdStartContender, number>;
    for (const contender of COLD_START_CONTENDERS) {
      const outfile = join(dir, `${contender}-${store}.js`);
      execFileSync(
        join(ROOT, 'node_modules', '.bin', 'esbuild'),
        [
          join(TSC_OUT, ENTRIES[store][contender]),
          ...esbuildFlags,
          `--outfile=${outfile}`,
          '--log-level=error',
        ],
        { cwd: ROOT, stdio: 'inherit' },
      );
      bytes[store][contender] = statSync(outfile).size;
    }
  }
  for (const [mode, entry] of Object.entries(FIRST_BATCH_ENTRIES)) {
    execFileSync(
      join(ROOT, 'node_modules', '.bin', 'esbuild'),
      [
        join(TSC_OUT, entry),
        ...esbuildFlags,
        `--outfile=${join(dir, `first-batch-${mode}.js`)}`,
        '--log-level=error',
      ],
      { cwd: ROOT, stdio: 'inherit' },
    );
  }
  return { dir, bytes };
}

/** Starts one process on `bundle` and waits for its answer (rejecting on a failure or no answer). */
function coldStart(bundle: string, env: NodeJS.ProcessEnv): Promise<ColdStartRun> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [join(__dirname, 'cold-start', 'invoke-once.cjs'), bundle], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let run: ColdStartRun | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const at = out.indexOf(ANSWER_MARK);
      const end = at < 0 ? -1 : out.indexOf('\n', at);
      if (run || end < 0) return;
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
      const line = JSON.parse(out.slice(at + ANSWER_MARK.length, end)) as {
        answer: { batchItemFailures: unknown[] };
        cpuMs: number;
        maxRssKb: number;
        firstBatch: ColdStartRun['firstBatch'];
      };
      if (line.answer.batchItemFailures.length > 0) {
        reject(new Error(`${bundle}: the record failed (${JSON.stringify(line.answer)})\n${out}${err}`));
      }
      run = { wallMs, cpuMs: line.cpuMs, peakMiB: line.maxRssKb / 1024, firstBatch: line.firstBatch };
    });
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      run && code === 0 ? resolve(run) : reject(new Error(`${bundle} exited ${code}:\n${out}${err}`)),
    );
  });
}

export async function benchColdStart(
  { rounds }: { rounds: number },
  log: (line: string) => void,
): Promise<ColdStartResults> {
  const esbuildFlags = lambdaGuideEsbuildFlags();
  const { dir, bytes } = bundleContenders(esbuildFlags, log);
  const redis = await startRedisServer();
  const dynamo = await startDynalite({ childProcess: true });
  const loadBefore = loadavg();
  try {
    const table = await dynamo.createTable({ name: 'idempotency' });
    const baseEnv: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      // What every Lambda sandbox has, and what the apps read.
      AWS_LAMBDA_FUNCTION_NAME: LAMBDA_FUNCTION_NAME,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      IDEMPOTENCY_TABLE: table,
      REDIS_URL: redis.url,
    };
    const only = process.env.COLD_START_ONLY;
    if (only !== undefined && only !== 'contenders' && only !== 'first-batch') {
      throw new Error(`COLD_START_ONLY=${only}: the cases are contenders and first-batch`);
    }
    let runs: ColdStartResults['runs'];
    if (only !== 'first-batch') {
      runs = {} as NonNullable<ColdStartResults['runs']>;
      for (const store of COLD_START_STORES) {
        log(
          `  ${store}: ${rounds} rounds of ${COLD_START_CONTENDERS.join(', ')}, after a warm-up run of each`,
        );
        runs[store] = { ours: [], powertools: [], floor: [] };
        for (let round = -1; round < rounds; round++) {
          for (const contender of COLD_START_CONTENDERS) {
            const run = await coldStart(join(dir, `${contender}-${store}.js`), baseEnv);
            if (round >= 0) runs[store][contender].push(run);
          }
        }
      }
    }
    const firstBatch = only === 'contenders' ? undefined : await benchFirstBatch(dir, baseEnv, rounds, log);
    return { rounds, esbuildFlags, bytes, runs, load: [loadBefore, loadavg()], firstBatch };
  } finally {
    await redis.stop();
    await dynamo.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The first batch after INIT: each variant a new process in turn, A B C D A B C D ..., after a
 * warm-up run of each; the figure is the first batch's own time, not the process's.
 */
async function benchFirstBatch(
  dir: string,
  baseEnv: NodeJS.ProcessEnv,
  rounds: number,
  log: (line: string) => void,
): Promise<FirstBatchResults> {
  const pauseMs = Number(process.env.COLD_START_PAUSE_MS ?? 1_000);
  log(
    `  first batch after INIT: ${rounds} rounds of ${FIRST_BATCH_VARIANTS.join(', ')} (pause ${pauseMs} ms)`,
  );
  const loadBefore = loadavg();
  const runs = Object.fromEntries(FIRST_BATCH_VARIANTS.map((variant) => [variant, []])) as unknown as Record<
    FirstBatchVariant,
    ColdStartRun[]
  >;
  for (let round = -1; round < rounds; round++) {
    for (const variant of FIRST_BATCH_VARIANTS) {
      const [mode, when] = variant.split('-');
      const env = { ...baseEnv, COLD_START_PAUSE_MS: String(when === 'paused' ? pauseMs : 0) };
      const run = await coldStart(join(dir, `first-batch-${mode}.js`), env);
      if (round >= 0) runs[variant].push(run);
    }
  }
  return { rounds, pauseMs, runs, load: [loadBefore, loadavg()] };
}

const fixed = (value: number, digits = 0) => value.toFixed(digits);
const load = (values: number[]) => values.map((value) => value.toFixed(1)).join(' / ');

/** Median, min and max of the per-round ratios a/b of one figure. */
function pairedRatio(
  a: ColdStartRun[],
  b: ColdStartRun[],
  figure: 'wallMs' | 'cpuMs' | ((run: ColdStartRun) => number),
) {
  const value = typeof figure === 'function' ? figure : (run: ColdStartRun) => run[figure];
  const ratios = a.map((run, round) => value(run) / value(b[round]));
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
}

const spread = (ratio: ReturnType<typeof pairedRatio>) =>
  `${formatRatio(ratio.median)} (${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)})`;

/**
 * The targets: ours at most Powertools' wall time on a shared store (issue 38), and at most 1.06x the
 * bare Nest floor, wall and CPU, on every store (issue 51, after issue 38's 1.03x).
 */
export const COLD_START_TARGETS = { oursVsPowertools: 1.0, oursVsFloor: 1.06 };

export function renderColdStartSection(results: ColdStartResults): string[] {
  const out: string[] = [];
  out.push('## Cold start: process start to the first batch answered', '');
  if (results.runs) out.push(...renderContenders({ ...results, runs: results.runs }));
  if (results.firstBatch) out.push(...renderFirstBatch(results.firstBatch));
  return out;
}

function renderContenders(
  results: ColdStartResults & { runs: NonNullable<ColdStartResults['runs']> },
): string[] {
  const out: string[] = [];
  out.push(
    `Each run a new Node ${process.version} process that loads a Lambda handler bundle and invokes it once with ` +
      'a one-record SQS batch (a first sighting), timed from its spawn to the answer; CPU is the process’s own ' +
      '(user + system) up to the answer, peak memory its maxRSS. Every contender compiled with tsc and bundled ' +
      `with the Lambda guide’s esbuild flags (\`${results.esbuildFlags.join(' ')}\`), the bundle alone in a ` +
      'temporary folder (as in a Lambda sandbox), Redis a private redis-server, DynamoDB dynalite in a process of ' +
      `its own. Medians of ${results.rounds} rounds, the three contenders started in turn within each round after ` +
      `a warm-up run of each; ratios are taken within each round (median, and min–max over the rounds). Load ` +
      `average ${load(results.load[0])} when the section started, ${load(results.load[1])} when it ended (a ` +
      'shared machine: CPU ms is the steadier figure).',
    '',
    '- ours: the Quick start app (`createSqsLambdaHandler`, `@SqsMessageHandler` + `@Idempotent()`, ' +
      'class-validator) on the in-memory store, `RedisIdempotencyStore` (from a URL) or `DynamoDbIdempotencyStore`;',
    '- Powertools: `processPartialResponse` + `BatchProcessor`, zod, `makeIdempotent` on `CachePersistenceLayer` ' +
      '(`@redis/client`, connected at start-up) or `DynamoDBPersistenceLayer`; in memory, a `Map` layer written ' +
      'after its custom-layer documentation (Powertools ships none);',
    '- the bare Nest floor: the same event class, validation and handler method in a Nest application context, ' +
      'no idempotency library; on a shared store a claim written by hand (ioredis `SET NX PX`, a conditional ' +
      '`PutItem`).',
    '',
  );
  const rows: string[][] = [];
  for (const store of COLD_START_STORES) {
    for (const contender of COLD_START_CONTENDERS) {
      const runs = results.runs[store][contender];
      rows.push([
        store,
        contender,
        fixed(median(runs.map((run) => run.wallMs))),
        `${fixed(Math.min(...runs.map((run) => run.wallMs)))}–${fixed(Math.max(...runs.map((run) => run.wallMs)))}`,
        fixed(median(runs.map((run) => run.cpuMs))),
        fixed(median(runs.map((run) => run.peakMiB)), 1),
        `${fixed(results.bytes[store][contender] / 1024)}`,
      ]);
    }
  }
  out.push(
    '| store | contender | wall ms | wall min–max | CPU ms | peak MiB | bundle KiB |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
    '',
  );
  // The last two columns say where Nest itself sits beside Powertools, without this library.
  out.push(
    '| store | ours / Powertools, wall | CPU | ours / floor, wall | CPU | floor / Powertools, wall | CPU |',
    '|---|---:|---:|---:|---:|---:|---:|',
  );
  for (const store of COLD_START_STORES) {
    const { ours, powertools, floor } = results.runs[store];
    out.push(
      `| ${store} | ${spread(pairedRatio(ours, powertools, 'wallMs'))} | ${spread(pairedRatio(ours, powertools, 'cpuMs'))} | ` +
        `${spread(pairedRatio(ours, floor, 'wallMs'))} | ${spread(pairedRatio(ours, floor, 'cpuMs'))} | ` +
        `${spread(pairedRatio(floor, powertools, 'wallMs'))} | ${spread(pairedRatio(floor, powertools, 'cpuMs'))} |`,
    );
  }
  out.push('', '### Targets (medians of the rounds’ ratios)', '');
  for (const store of ['redis', 'dynamodb'] as const) {
    const ratio = pairedRatio(results.runs[store].ours, results.runs[store].powertools, 'wallMs').median;
    out.push(
      verdict(`ours / Powertools, ${store}, wall (issue 38)`, ratio, COLD_START_TARGETS.oursVsPowertools),
    );
  }
  for (const store of COLD_START_STORES) {
    for (const [figure, name] of [
      ['wallMs', 'wall'],
      ['cpuMs', 'CPU'],
    ] as const) {
      const ratio = pairedRatio(results.runs[store].ours, results.runs[store].floor, figure).median;
      out.push(
        verdict(
          `ours / the bare Nest floor, ${store}, ${name} (issue 51)`,
          ratio,
          COLD_START_TARGETS.oursVsFloor,
        ),
      );
    }
  }
  out.push(
    '',
    'In memory, Powertools has no layer of its own: that row is for scale, not a target. Where the time goes: ' +
      'bench/PROFILE.md, "Cold start".',
    '',
  );
  return out;
}

/** The target of issue 51: the first batch after INIT at most this fraction of one right after the import. */
export const FIRST_BATCH_TARGET = 0.3;

function renderFirstBatch(results: FirstBatchResults): string[] {
  const { runs, pauseMs } = results;
  const batchCpu = (run: ColdStartRun) => run.firstBatch.cpuMs;
  const batchWall = (run: ColdStartRun) => run.firstBatch.wallMs;
  const label: Record<FirstBatchVariant, string> = {
    'init-now': 'boot at import (the default), invoked right after the import',
    'init-paused': `boot at import (the default), invoked ${pauseMs} ms after it`,
    'lazy-now': '`bootAtInit: false`, invoked right after the import',
    'lazy-paused': `\`bootAtInit: false\`, invoked ${pauseMs} ms after it`,
  };
  const out = [
    '### The first batch after INIT (issue 51)',
    '',
    'The Quick start’s bundle (as above) in a new process, its first one-record batch timed alone: CPU and wall ' +
      'from the handler’s call to its answer, whatever of the boot is left included. Invoked right after the ' +
      `import (an on-demand cold start), or after a pause of ${pauseMs} ms (as when Lambda ran INIT before the ` +
      'first request: provisioned concurrency, proactive initialisation); booting at import (the default) or on ' +
      `the first invocation (\`bootAtInit: false\`, the behaviour before). Medians of ${results.rounds} rounds, ` +
      'the four started in turn within each round after a warm-up run of each; ratios within each round (median, ' +
      `min–max). Load average ${load(results.load[0])} when it started, ${load(results.load[1])} when it ended.`,
    '',
    '| boot | first batch CPU ms | wall ms | process CPU ms |',
    '|---|---:|---:|---:|',
    ...FIRST_BATCH_VARIANTS.map(
      (variant) =>
        `| ${label[variant]} | ${fixed(median(runs[variant].map(batchCpu)), 1)} | ` +
        `${fixed(median(runs[variant].map(batchWall)), 1)} | ${fixed(median(runs[variant].map((run) => run.cpuMs)))} |`,
    ),
    '',
    '| first batch, after the pause / right after the import | CPU | wall |',
    '|---|---:|---:|',
    `| boot at import | ${spread(pairedRatio(runs['init-paused'], runs['init-now'], batchCpu))} | ` +
      `${spread(pairedRatio(runs['init-paused'], runs['init-now'], batchWall))} |`,
    `| \`bootAtInit: false\` | ${spread(pairedRatio(runs['lazy-paused'], runs['lazy-now'], batchCpu))} | ` +
      `${spread(pairedRatio(runs['lazy-paused'], runs['lazy-now'], batchWall))} |`,
    '',
    verdict(
      'the first batch after INIT / right after the import, CPU',
      pairedRatio(runs['init-paused'], runs['init-now'], batchCpu).median,
      FIRST_BATCH_TARGET,
    ),
    '',
  ];
  return out;
}

function verdict(what: string, ratio: number, target: number): string {
  const met = ratio <= target;
  return `- ${what} ≤ ${target.toFixed(2)}x: ${formatRatio(ratio)} — ${met ? 'met' : `**missed** by ${((ratio / target - 1) * 100).toFixed(0)}%`}`;
}
