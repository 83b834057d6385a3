import { rmSync } from 'node:fs';
import report from './not-run-report.js';

export default async function globalTeardown() {
  await globalThis.__FAUXQS__?.stop();
  await globalThis.__REDIS__?.stop();
  const dir = process.env.TEST_NOT_RUN_DIR;
  if (!dir) return;
  // Jest has printed its summary by now: this comes last, where a reader looks.
  const lines = report.notRunReport(dir);
  if (lines.length > 0) process.stderr.write(`${lines.join('\n')}\n`);
  rmSync(dir, { recursive: true, force: true });
}
