#!/usr/bin/env node
// `npm start`: the demo, with nothing to install or run first.
//
// Without SQS_ENDPOINT (or --aws) it starts fauxqs, an SQS emulator, in this process. fauxqs is
// ESM-only, hence this .mjs launcher; the demo itself is TypeScript with decorators, run through
// ts-node in transpile-only mode (fast, and it emits the decorator metadata Nest needs).
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);

if (argv.includes('--help') || argv.includes('-h')) {
  require('ts-node').register({ transpileOnly: true, project: join(root, 'tsconfig.json') });
  console.log(require('./demo/demo-options.ts').DEMO_USAGE);
  process.exit(0);
}

// The AWS SDK warns about Node 20 once per process; the demo is not the place for it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

let fauxqs;
if (!process.env.SQS_ENDPOINT && !argv.includes('--aws')) {
  const { startFauxqs } = await import('fauxqs');
  fauxqs = await startFauxqs({ port: 0, host: '127.0.0.1', logger: false });
}

let code = 2;
try {
  require('ts-node').register({ transpileOnly: true, project: join(root, 'tsconfig.json') });
  const { runDemo } = require('./demo/run-demo.ts');
  code = await runDemo(argv, process.env, fauxqs?.address);
} catch (error) {
  console.error(error);
} finally {
  await fauxqs?.stop();
}
process.exitCode = code;
// Everything is closed by now; should a stray handle linger, do not keep the terminal waiting.
setTimeout(() => process.exit(code), 2000).unref();
