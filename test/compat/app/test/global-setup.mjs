// A real SQS (fauxqs, ESM-only, hence .mjs) for the polling check, on a free port.
import { startFauxqs } from 'fauxqs';

export default async function globalSetup() {
  const server = await startFauxqs({ port: 0, logger: false });
  globalThis.__FAUXQS__ = server;
  process.env.SQS_ENDPOINT = server.address;
}
