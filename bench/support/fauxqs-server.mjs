// Starts fauxqs (ESM-only, hence .mjs) on a free port in a process of its own, so the emulator's
// work is not counted in the bench's CPU time, and prints its address as one line on stdout.
import { startFauxqs } from 'fauxqs';

const server = await startFauxqs({ port: 0, logger: false });
process.stdout.write(`${server.address}\n`);
process.on('SIGTERM', async () => {
  await server.stop();
  process.exit(0);
});
