import { ChildProcess, fork } from 'node:child_process';
import { mkdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import * as ts from 'typescript';
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
  return forkWith(entry, ['--require', 'ts-node/register/transpile-only'], env);
}

/**
 * As {@link forkTs}, for an entry that imports only packages (the library through its built package,
 * `nestjs-idempotent-sqs`, not ../../lib): the entry is transpiled once per test process, with the
 * project's compiler options, and the child runs the JavaScript on plain Node. A child started so
 * costs half the CPU of one under ts-node (which loads the TypeScript compiler first): a spec that
 * starts a dozen of them saves seconds of CPU on a machine the suite shares.
 */
export function forkCompiled(entry: string, env: Record<string, string | undefined>): ChildProcess {
  return forkWith(compiled(entry), [], env);
}

function forkWith(entry: string, execArgv: string[], env: Record<string, string | undefined>): ChildProcess {
  const child = fork(entry, [], {
    cwd: ROOT,
    execArgv,
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

const transpiled = new Map<string, string>();
const COMPILED_DIR = join(ROOT, '.readme-check', String(process.pid), 'forked');

/** Removes what {@link forkCompiled} wrote, once its children have exited (a spec's `afterAll`). */
export function removeCompiled(): void {
  rmSync(COMPILED_DIR, { recursive: true, force: true });
  try {
    rmdirSync(dirname(COMPILED_DIR)); // this process's folder, unless another spec of it still uses it
  } catch {
    // not empty, or gone
  }
  transpiled.clear();
}

/**
 * `entry` as JavaScript, in .readme-check/ (inside the package, so that `require('nestjs-idempotent-sqs')`
 * resolves to the package itself, as in the fixtures under test/), compiled as ts-node's transpile-only
 * mode compiles it: file by file, decorator metadata included.
 */
function compiled(entry: string): string {
  const known = transpiled.get(entry);
  if (known) return known;
  const { config } = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.convertCompilerOptionsFromJson(config.compilerOptions, ROOT);
  const { outputText } = ts.transpileModule(readFileSync(entry, 'utf8'), {
    compilerOptions: { ...options, module: ts.ModuleKind.CommonJS, sourceMap: false, declaration: false },
    fileName: entry,
  });
  mkdirSync(COMPILED_DIR, { recursive: true });
  const file = join(COMPILED_DIR, basename(entry).replace(/\.ts$/, '.js'));
  writeFileSync(file, outputText);
  transpiled.set(entry, file);
  return file;
}

/**
 * Runs a loading fixture (`test/fixtures/*.main.ts`) under ts-node: each `{ step, loaded }` message it
 * sends is kept by step, and its output for a failure's message.
 */
export async function stepsOfLoadingFixture(
  entry: string,
  env: Record<string, string | undefined>,
): Promise<{ code: unknown; output: string; steps: Record<string, string[]> }> {
  const child = forkTs(entry, env);
  const steps: Record<string, string[]> = {};
  let output = '';
  child.on('message', ({ step, loaded }: { step: string; loaded: string[] }) => (steps[step] = loaded));
  child.stdout!.on('data', (chunk: Buffer) => (output += String(chunk)));
  child.stderr!.on('data', (chunk: Buffer) => (output += String(chunk)));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  return { code, output, steps };
}
