import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { startRedisServer } from '../test/support/redis-server';
import { measureOps } from './bench-harness';
import {
  freshEvents,
  IN_FLIGHT,
  LAMBDA_BATCH_CASES,
  LambdaBatchCase,
  lambdaBatchInvokers,
} from './lambda-batch.bench';

/**
 * One whole-batch case alone, for a CPU profile: warms up, then profiles PROFILE_BATCHES invocations
 * (default 3,000) with 8 in flight on a private Redis, and only those (the V8 profiler started and
 * stopped around them through node:inspector, so start-up and ts-node's compiling are left out):
 *
 *   node --require ts-node/register/transpile-only bench/profile-lambda-batch.ts inMemoryFirst /tmp/in-memory.cpuprofile
 *   node bench/support/cpu-profile-summary.mjs /tmp/in-memory.cpuprofile
 *
 * Duplicates cases complete their records first, unprofiled.
 */
async function main(): Promise<void> {
  const [id, out = `${process.argv[2]}.cpuprofile`] = process.argv.slice(2) as [LambdaBatchCase, string?];
  if (!LAMBDA_BATCH_CASES.includes(id)) {
    throw new Error(`name a case: ${LAMBDA_BATCH_CASES.join(', ')} (got ${process.argv[2]})`);
  }
  const batches = Number(process.env.PROFILE_BATCHES ?? 3_000);
  const redis = await startRedisServer();
  const { invokers, close } = await lambdaBatchInvokers(redis.url);
  try {
    const invoke = invokers[id];
    const run = async (events: ReturnType<typeof freshEvents>) =>
      measureOps((i) => invoke(events[i]), events.length, IN_FLIGHT);
    await run(freshEvents(500)); // warm-up
    const events = freshEvents(batches);
    if (id.endsWith('Duplicates')) await run(events);
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    const sample = await run(events);
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(out, JSON.stringify(profile));
    session.disconnect();
    process.stderr.write(
      `${id}: ${Math.round(sample.perSecond * 10)} records/s, ${(sample.cpuMicros / 10).toFixed(1)} CPU µs/record; profile in ${out}\n`,
    );
  } finally {
    await close();
    await redis.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
