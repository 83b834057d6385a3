// Starts the real parts the e2e specs talk to, once per `npm test`:
// - fauxqs (an SQS emulator, ESM-only, hence this .mjs) on a free port → SQS_ENDPOINT;
// - a private redis-server on a free port → REDIS_URL, unless REDIS_URL is already set;
// - the PostgreSQL the Postgres specs create their databases on → POSTGRES_ADMIN_URL (postgres-probe.mjs).
// Jest workers start after this and inherit the environment.
import { startFauxqs } from 'fauxqs';
import redis from '../support/redis-server.js';
import { probePostgres } from './postgres-probe.mjs';

export default async function globalSetup() {
  // The AWS SDK warns once per module registry that it will need Node 22 from 2027: once per spec file.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const sqs = await startFauxqs({ port: 0, logger: false });
  globalThis.__FAUXQS__ = sqs;
  process.env.SQS_ENDPOINT = sqs.address;
  if (!process.env.REDIS_URL) {
    const server = await redis.startRedisServer();
    globalThis.__REDIS__ = server;
    process.env.REDIS_URL = server.url;
  }
  await probePostgres();
}
