import { GetQueueAttributesCommand, QueueDoesNotExist, SQSClient } from '@aws-sdk/client-sqs';
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ensureBuilt } from './support/ensure-built';
import { killOnExit } from './support/kill-on-exit';
import { readmeBlocks } from './support/readme-blocks';
import { waitFor } from './support/wait-for';

/**
 * docs/local-development.md, done as it says, against fauxqs: its CLI started as a process of its own,
 * the queues created by the guide's script, the README's Quick start app run with the URL the
 * emulator returned and the emulator's endpoint, an order sent twice by the guide's other script.
 * The app handles it once, acks the copy as a duplicate, and the queue ends empty; the URL one would
 * build by hand names no queue. Nothing here is the test suite's own fauxqs: the guide's steps only.
 */
const ROOT = join(__dirname, '..');
ensureBuilt();

const dir = join(ROOT, '.readme-check', `local-dev-${process.pid}`);
const children: ChildProcess[] = [];
let endpoint = '';
const credentials = { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };

describe('docs/local-development.md, step by step against fauxqs', () => {
  beforeAll(async () => {
    writeApp();
    // Step 1: the emulator's own CLI (`npx fauxqs`), on a free port instead of 4566.
    const fauxqs = start(process.execPath, [join(ROOT, 'node_modules', 'fauxqs', 'dist', 'cli.js')], {
      FAUXQS_PORT: '0',
    });
    await waitFor(
      () => /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.test(fauxqs.output),
      30_000,
      'fauxqs up',
    );
    endpoint = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(fauxqs.output)![1];
  }, 60_000);

  afterAll(async () => {
    for (const child of children.reverse()) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the queues, runs the app on the returned URL, and handles an order once', async () => {
    const env = { SQS_ENDPOINT: endpoint, ...credentials };

    // Step 2: the guide's script creates the queues and prints the URL to use.
    const created = await run('scripts/create-queues.ts', [], env);
    const url = /^ORDERS_QUEUE_URL=(\S+)$/m.exec(created)?.[1];
    const port = new URL(endpoint).port;
    expect(url).toBe(`http://sqs.us-east-1.localhost:${port}/000000000000/orders`);

    // Step 3: only that URL names the queue; the one built by hand does not.
    const sqs = new SQSClient({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    try {
      const depth = async () => {
        const { Attributes } = await sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }),
        );
        return (
          Number(Attributes!.ApproximateNumberOfMessages) +
          Number(Attributes!.ApproximateNumberOfMessagesNotVisible)
        );
      };
      await expect(depth()).resolves.toBe(0);
      await expect(
        sqs.send(new GetQueueAttributesCommand({ QueueUrl: `http://localhost:${port}/000000000000/orders` })),
      ).rejects.toBeInstanceOf(QueueDoesNotExist);

      // Step 4: the Quick start app, with the URL and the endpoint in its environment, then the order, twice.
      const app = start(process.execPath, ['--require', 'ts-node/register/transpile-only', 'src/main.ts'], {
        ...env,
        ORDERS_QUEUE_URL: url!,
      });
      await run('scripts/send-order.ts', ['evt-1'], { ...env, ORDERS_QUEUE_URL: url! });
      await waitFor(
        () => /status=OK type=order_created key=evt-1/.test(app.output),
        60_000,
        'the order handled',
      );
      await run('scripts/send-order.ts', ['evt-1'], { ...env, ORDERS_QUEUE_URL: url! });
      await waitFor(
        () => /status=DUPLICATE type=order_created key=evt-1/.test(app.output),
        60_000,
        'the copy acked as a duplicate',
      );
      await waitFor(async () => (await depth()) === 0, 30_000, 'both messages deleted');
      expect(app.output.match(/status=OK /g)).toHaveLength(1);
    } finally {
      sqs.destroy();
    }
  }, 180_000);
});

/** The app of the guide: the README's Quick start module and main.ts, the guide's scripts, Nest 11's tsconfig. */
function writeApp(): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  symlinkSync(ROOT, join(dir, 'node_modules', 'nestjs-idempotent-sqs'), 'dir');
  const wanted: Record<string, string> = {
    'README.md': 'src/app.module.ts src/main.ts',
    'docs/local-development.md': 'scripts/create-queues.ts scripts/send-order.ts',
  };
  for (const [page, paths] of Object.entries(wanted)) {
    const blocks = readmeBlocks(readFileSync(join(ROOT, page), 'utf8'));
    for (const path of paths.split(' ')) {
      const block = blocks.find((candidate) => candidate.path === path);
      if (!block) throw new Error(`${page} has no block starting // ${path}`);
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), block.code + '\n');
    }
  }
  const tsconfig = readmeBlocks(readFileSync(join(ROOT, 'docs', 'testing.md'), 'utf8')).find((block) =>
    block.markers.recipes.includes('nest11/tsconfig.json'),
  );
  writeFileSync(join(dir, 'tsconfig.json'), tsconfig!.code);
}

/** A process of the guide, its output collected. */
function start(command: string, args: string[], env: Record<string, string>) {
  const child = spawn(command, args, {
    cwd: dir,
    env: { ...process.env, ...env, NO_COLOR: '1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  });
  killOnExit(child);
  children.push(child);
  const handle = { child, output: '' };
  child.stdout.on('data', (chunk) => (handle.output += chunk));
  child.stderr.on('data', (chunk) => (handle.output += chunk));
  return handle;
}

/** Runs one of the guide's scripts to its end; its output. */
function run(script: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--require', 'ts-node/register/transpile-only', script, ...args],
      {
        cwd: dir,
        env: { ...process.env, ...env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
        timeout: 60_000,
      },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${script}: ${error.message}\n${stderr}`)) : resolve(stdout),
    );
    killOnExit(child);
  });
}
