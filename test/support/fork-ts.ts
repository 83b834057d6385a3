import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { killOnExit } from './kill-on-exit';

const ROOT = join(__dirname, '..', '..');

/**
 * Starts a TypeScript entry point as a child process with an IPC channel, through ts-node in
 * transpile-only mode (as `npm start` runs the demo: fast, and it emits the decorator metadata
 * Nest needs). Its stdout and stderr are piped for the caller to read. It is killed, at the latest,
 * when the test process exits. `env` adds to this process's environment; an `undefined` value leaves
 * that variable out.
 */
export function forkTs(entry: string, env: Record<string, string | undefined>): ChildProcess {
  const child = fork(entry, [], {
    cwd: ROOT,
    execArgv: ['--require', 'ts-node/register/transpile-only'],
    env: {
      ...process.env,
      ...env,
      TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  return killOnExit(child);
}
