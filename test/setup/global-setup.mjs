// Starts the real parts the e2e specs talk to, once per `npm test`:
// - fauxqs (an SQS emulator, ESM-only, hence this .mjs) on a free port → SQS_ENDPOINT;
// - a private redis-server on a free port → REDIS_URL.
// The suite never touches a Redis it did not start: a REDIS_URL from the environment (a user's own
// Redis) is ignored and replaced. Without redis-server the Redis specs are skipped and listed at the
// end of the run (TEST_REDIS_MISSING), or fail under REQUIRE_ALL_CHECKS=1 (CI).
// - the PostgreSQL the Postgres specs create their databases on → POSTGRES_ADMIN_URL
//   (postgres-probe.mjs); none answering: TEST_POSTGRES_MISSING, the same way.
// Jest workers start after this and inherit the environment.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFauxqs } from 'fauxqs';
import redis from '../support/redis-server.js';
import { probePostgres } from './postgres-probe.mjs';

export default async function globalSetup() {
  // The AWS SDK warns once per module registry that it will need Node 22 from 2027: once per spec file.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  // The run's directory: the checks not run, and the child processes to kill at the end.
  process.env.TEST_RUN_DIR = mkdtempSync(join(tmpdir(), 'nestjs-idempotent-sqs-run-'));
  process.env.TEST_NOT_RUN_DIR = process.env.TEST_RUN_DIR;
  // The Postgres databases of this run carry its id, and the teardown drops what a red run left.
  process.env.TEST_RUN_ID = randomBytes(3).toString('hex');
  const sqs = await startFauxqs({ port: 0, logger: false });
  globalThis.__FAUXQS__ = sqs;
  process.env.SQS_ENDPOINT = sqs.address;

  delete process.env.REDIS_URL;
  delete process.env.TEST_REDIS_MISSING;
  try {
    const server = await redis.startRedisServer();
    globalThis.__REDIS__ = server;
    process.env.REDIS_URL = server.url;
  } catch (error) {
    if (!(error instanceof redis.RedisServerMissingError)) throw error;
    process.env.TEST_REDIS_MISSING = error.reason;
  }
  await probePostgres();
}
