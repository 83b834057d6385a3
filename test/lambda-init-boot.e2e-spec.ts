import { fork } from 'node:child_process';
import { join } from 'node:path';
import { Injectable, Module } from '@nestjs/common';
import { IsString } from 'class-validator';
import {
  createSqsLambdaHandler,
  IdempotencyModule,
  SqsEvent,
  SqsLambdaHandler,
  SqsLambdaHandlerOptions,
  SqsMessageHandler,
} from '../lib';
import { buildSqsEvent, buildSqsRecord } from '../lib/testing';
import { SqsHandlerExplorer } from '../lib/sqs/nest/sqs-handler.explorer';
import { killOnExit } from './support/kill-on-exit';
import { waitFor } from './support/wait-for';

/**
 * `createSqsLambdaHandler` boots the app when it is called: in Lambda's INIT phase, where the module
 * that creates the handler runs, before any request (with provisioned concurrency or proactive
 * initialisation, long before). The first invocation waits for what is left of the boot; a failed
 * boot is reported by the invocation that meets it, and the next one boots again.
 */

@SqsEvent('invoice_issued')
class InvoiceIssued {
  @IsString() id!: string;
}

/** What a test sees of its app's boots, and the levers it pulls on them. */
interface Probe {
  constructed: number;
  initialised: number;
  destroyed: number;
  /** Thrown by the handler class's constructor while set (a database unreachable at start-up). */
  failure?: string;
  /** Awaited by the handler class's `onModuleInit` (a boot still in flight). */
  gate?: Promise<void>;
}

/** A function's module whose boots `probe` counts, new for each test. */
function functionModule(probe: Probe) {
  @Injectable()
  class Invoices {
    readonly issued: string[] = [];
    constructor() {
      probe.constructed++;
      if (probe.failure) throw new Error(probe.failure);
    }
    async onModuleInit(): Promise<void> {
      probe.initialised++;
      await probe.gate;
    }
    onModuleDestroy(): void {
      probe.destroyed++;
    }
    @SqsMessageHandler(InvoiceIssued)
    async onIssued(event: InvoiceIssued): Promise<void> {
      this.issued.push(event.id);
    }
  }
  @Module({ imports: [IdempotencyModule.forRoot({})], providers: [Invoices] })
  class InvoicesFunction {}
  return InvoicesFunction;
}

const newProbe = (): Probe => ({ constructed: 0, initialised: 0, destroyed: 0 });
const event = (id: string) =>
  buildSqsEvent([buildSqsRecord({ type: 'invoice_issued', id }, { queue: 'invoices' })]);
const CAUSE = 'database not reachable at start-up';
/** A few turns of the event loop: what a boot let through would need to move on. */
const turns = async () => {
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setTimeout(resolve, 1));
};
function gate(): { gate: Promise<void>; open: () => void } {
  let open!: () => void;
  return { gate: new Promise<void>((resolve) => (open = resolve)), open };
}

describe('createSqsLambdaHandler boots at INIT', () => {
  // What the Lambda runtime sets in every sandbox: the INIT boot is Lambda's (see 'outside Lambda' below).
  const functionName = process.env.AWS_LAMBDA_FUNCTION_NAME;
  beforeAll(() => (process.env.AWS_LAMBDA_FUNCTION_NAME = 'invoices'));
  afterAll(() => {
    if (functionName === undefined) delete process.env.AWS_LAMBDA_FUNCTION_NAME;
    else process.env.AWS_LAMBDA_FUNCTION_NAME = functionName;
  });
  const handlers: SqsLambdaHandler[] = [];
  const create = (probe: Probe, options: SqsLambdaHandlerOptions = {}) => {
    const handler = createSqsLambdaHandler(functionModule(probe), {
      nestOptions: { logger: false },
      ...options,
    });
    handlers.push(handler);
    return handler;
  };
  afterEach(async () => {
    await Promise.all(handlers.splice(0).map((handler) => handler.close()));
  });

  it('starts the boot when the handler is created, before any invocation, and boots once', async () => {
    const probe = newProbe();
    const handler = create(probe);
    await waitFor(() => probe.initialised === 1, 20_000, 'the app to boot with no invocation');
    expect(await handler(event('i-1'))).toEqual({ batchItemFailures: [] });
    expect(await handler(event('i-2'))).toEqual({ batchItemFailures: [] });
    expect(probe.constructed).toBe(1);
  });

  it('makes the first invocation wait for a boot still in flight', async () => {
    const { gate: inFlight, open } = gate();
    const probe: Probe = { ...newProbe(), gate: inFlight };
    const handler = create(probe);
    await waitFor(() => probe.initialised === 1, 20_000, 'the boot to start');
    let answered = false;
    const first = handler(event('i-3')).then((response) => ((answered = true), response));
    await turns();
    expect(answered).toBe(false);
    open();
    expect(await first).toEqual({ batchItemFailures: [] });
    expect(probe.constructed).toBe(1);
  });

  it('fails the first invocation with the cause of a failed INIT boot, and boots again on the next', async () => {
    const probe: Probe = { ...newProbe(), failure: CAUSE };
    const handler = create(probe);
    await waitFor(() => probe.constructed === 1, 20_000, 'the boot to fail');
    await turns();
    await expect(handler(event('i-4'))).rejects.toThrow(CAUSE);
    // That invocation reported the INIT boot's failure; it did not boot again on its own.
    expect(probe.constructed).toBe(1);
    probe.failure = undefined;
    expect(await handler(event('i-4'))).toEqual({ batchItemFailures: [] });
    expect(probe.constructed).toBe(2);
  });

  it('gives getApp() the failed boot’s cause, then boots again', async () => {
    const probe: Probe = { ...newProbe(), failure: CAUSE };
    const handler = create(probe);
    await expect(handler.getApp()).rejects.toThrow(CAUSE);
    probe.failure = undefined;
    await expect(handler.getApp()).resolves.toBeDefined();
    expect(probe.constructed).toBe(2);
  });

  it('closes the app when a step after Nest’s own boot fails, so a retry does not leave it open', async () => {
    const probe = newProbe();
    const handler = create(probe, {
      configure: () => {
        throw new Error('configure failed');
      },
    });
    await expect(handler(event('i-5'))).rejects.toThrow('configure failed');
    expect(probe.destroyed).toBe(1);
  });

  it('raises no unhandled rejection when the INIT boot fails (a process under --unhandled-rejections=strict lives on)', async () => {
    const child = killOnExit(
      fork(join(__dirname, 'fixtures', 'lambda-failing-init.fixture.ts'), [], {
        execArgv: ['--unhandled-rejections=strict', '--require', 'ts-node/register/transpile-only'],
        env: {
          ...process.env,
          AWS_LAMBDA_FUNCTION_NAME: 'invoices',
          TS_NODE_PROJECT: join(__dirname, '..', 'tsconfig.json'),
        },
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      }),
    );
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect({ code, err }).toEqual({ code: 0, err: '' });
    expect(JSON.parse(out)).toEqual({ first: { error: CAUSE }, second: { batchItemFailures: [] } });
  });

  it('warms the handlers’ calls at the end of the boot without choosing them: enhancers added before the first record count', async () => {
    const handler = create(newProbe());
    const [definition] = (await handler.getApp()).get(SqsHandlerExplorer).getHandlers();
    expect(definition.path).toBeUndefined();
    expect(await handler(event('i-10'))).toEqual({ batchItemFailures: [] });
    expect(definition.path).toBe('direct');
  });

  describe('getApp() and close()', () => {
    it('close() during a boot in flight waits for it and closes its app; the next invocation boots again', async () => {
      const { gate: inFlight, open } = gate();
      const probe: Probe = { ...newProbe(), gate: inFlight };
      const handler = create(probe);
      await waitFor(() => probe.initialised === 1, 20_000, 'the boot to start');
      let closed = false;
      const closing = handler.close().then(() => (closed = true));
      await turns();
      expect(closed).toBe(false);
      open();
      await closing;
      expect(probe.destroyed).toBe(1);
      expect(await handler(event('i-6'))).toEqual({ batchItemFailures: [] });
      expect(probe.constructed).toBe(2);
    });

    it('close() ignores a failed boot', async () => {
      const probe: Probe = { ...newProbe(), failure: CAUSE };
      const handler = create(probe);
      await waitFor(() => probe.constructed === 1, 20_000, 'the boot to fail');
      await expect(handler.close()).resolves.toBeUndefined();
      probe.failure = undefined;
      expect(await handler(event('i-7'))).toEqual({ batchItemFailures: [] });
    });

    it('getApp() gives the app the INIT boot started', async () => {
      const probe = newProbe();
      const handler = create(probe);
      await waitFor(() => probe.initialised === 1, 20_000, 'the app to boot');
      const app = await handler.getApp();
      await handler(event('i-8'));
      expect(await handler.getApp()).toBe(app);
      expect(probe.constructed).toBe(1);
    });
  });

  describe('bootAtInit: false, and outside Lambda', () => {
    it('boots on the first invocation instead, as before', async () => {
      const lazy = newProbe();
      const eager = newProbe();
      const handler = create(lazy, { bootAtInit: false });
      create(eager);
      // By the time the app created after it has booted, the lazy one has not even started.
      await waitFor(() => eager.initialised === 1, 20_000, 'the other app to boot');
      await turns();
      expect(lazy.constructed).toBe(0);
      expect(await handler(event('i-9'))).toEqual({ batchItemFailures: [] });
      expect(lazy.constructed).toBe(1);
    });

    it('boots on getApp() too, and reports a failed boot to its caller', async () => {
      const probe: Probe = { ...newProbe(), failure: CAUSE };
      const handler = create(probe, { bootAtInit: false });
      await expect(handler.getApp()).rejects.toThrow(CAUSE);
      probe.failure = undefined;
      await expect(handler.getApp()).resolves.toBeDefined();
      expect(probe.constructed).toBe(2);
    });

    it('is the default outside Lambda (a test or a script importing the handler), where true boots at creation', async () => {
      delete process.env.AWS_LAMBDA_FUNCTION_NAME;
      try {
        const lazy = newProbe();
        const eager = newProbe();
        const handler = create(lazy);
        create(eager, { bootAtInit: true });
        await waitFor(() => eager.initialised === 1, 20_000, 'the app booting at creation');
        await turns();
        expect(lazy.constructed).toBe(0);
        expect(await handler(event('i-10'))).toEqual({ batchItemFailures: [] });
        expect(lazy.constructed).toBe(1);
      } finally {
        process.env.AWS_LAMBDA_FUNCTION_NAME = 'invoices';
      }
    });

    it('is checked like every option', () => {
      expect(() => create(newProbe(), { bootAtInit: 'no' } as never)).toThrow(
        'createSqsLambdaHandler() options: bootAtInit must be true or false, got',
      );
    });
  });
});
