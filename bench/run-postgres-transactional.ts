import { cpus, loadavg, totalmem } from 'node:os';
import { Redis } from 'ioredis';
import { startRedisServer } from '../test/support/redis-server';
import { openBenchDatabase } from './postgres-store.bench';
import { benchTransactionalPostgres, renderTransactionalSection } from './postgres-transactional.bench';

/**
 * `npm run bench:transactional`: the transactional-handler section of the benchmark alone, in short
 * rounds (BENCH_ROUNDS, default 3), against a private redis-server it starts and a database of its
 * own on BENCH_PG_URL. Prints the section with the machine and its load; writes nothing.
 */
async function main(): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const redisServer = await startRedisServer();
  process.env.REDIS_URL = redisServer.url;
  const database = await openBenchDatabase();
  const admin = new Redis(redisServer.url, { db: Number(process.env.BENCH_REDIS_DB ?? 15) });
  try {
    const load = loadavg().map((value) => value.toFixed(2));
    const { results, close } = await benchTransactionalPostgres(
      database,
      admin,
      { messages: { 1: 500, 32: 3_000 }, concurrencies: [1, 32], rounds, warmups: 1 },
      (line) => process.stderr.write(`${line}\n`),
    );
    await close();
    const machine =
      `${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
      `load average ${load.join(' / ')} at the start, PostgreSQL ${database.version}, ${rounds} rounds (medians)`;
    process.stdout.write(
      `${[`Machine: ${machine}`, '', ...renderTransactionalSection(results, [1, 32])].join('\n')}\n`,
    );
  } finally {
    await admin.quit();
    await database.drop();
    await redisServer.stop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
