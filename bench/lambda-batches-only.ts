import { loadavg } from 'node:os';
import { startRedisServer } from '../test/support/redis-server';
import { formatRate, runRounds } from './bench-harness';
import {
  IN_FLIGHT,
  LAMBDA_BATCH_CASES,
  LambdaBatchCase,
  lambdaBatchCase,
  lambdaBatchInvokers,
} from './lambda-batch.bench';

/**
 * `BENCH_ONLY=lambda-batches npm run bench`: the whole Lambda batch cases of the whole-batch section
 * alone, for comparing two commits A B A B in one session (PROFILE.md, "Speed held"), where the full
 * section takes too long to repeat. `BENCH_IN_FLIGHT` (default 8) invocations in flight;
 * `BENCH_LAMBDA_CASES` (comma-separated, default ours: oursFirst, oursDuplicates, plain, inMemoryFirst);
 * `BENCH_BATCHES` invocations per measurement (default 3,000 with 8 in flight, 1,000 with 1);
 * `BENCH_ROUNDS` rounds (default 5) after one warm-up. Prints one line per case and, last, a JSON line.
 */
export async function runLambdaBatchesOnly(log: (line: string) => void): Promise<string[]> {
  const ids = (process.env.BENCH_LAMBDA_CASES ?? 'oursFirst,oursDuplicates,plain,inMemoryFirst')
    .split(',')
    .map((id) => id.trim()) as LambdaBatchCase[];
  const unknown = ids.filter((id) => !LAMBDA_BATCH_CASES.includes(id));
  if (unknown.length > 0) throw new Error(`BENCH_LAMBDA_CASES: no case ${unknown.join(', ')}`);
  const batches = Number(process.env.BENCH_BATCHES ?? (IN_FLIGHT === 1 ? 1_000 : 3_000));
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
  const loadBefore = loadavg()[0];
  const redis = await startRedisServer();
  try {
    const { invokers, flush, close } = await lambdaBatchInvokers(redis.url);
    try {
      const cases = ids.map((id) =>
        lambdaBatchCase(id, invokers[id], {
          duplicates: id.endsWith('Duplicates'),
          batches,
          inFlight: IN_FLIGHT,
          flush,
        }),
      );
      log(`Lambda batches alone: ${batches} invocations, ${IN_FLIGHT} in flight, ${rounds} rounds`);
      const results = await runRounds(cases, {
        rounds,
        warmups: 1,
        onRound: (round) => log(round < 0 ? '  warm-up round' : `  round ${round + 1}/${rounds}`),
        paceCheck: true,
      });
      const figures = Object.fromEntries(ids.map((id) => [id, results.get(id)!]));
      return [
        ...ids.map(
          (id) =>
            `${id}: ${formatRate(figures[id].perSecond)} records/s, ${figures[id].cpuMicros.toFixed(1)} CPU µs/record`,
        ),
        JSON.stringify({ inFlight: IN_FLIGHT, batches, rounds, load: [loadBefore, loadavg()[0]], figures }),
      ];
    } finally {
      await close();
    }
  } finally {
    await redis.stop();
  }
}
