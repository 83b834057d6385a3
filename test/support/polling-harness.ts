import type { ModuleMetadata } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { IdempotencyModule, IdempotencyModuleOptions, SqsModule, SqsModuleOptions } from '../../lib';
import { captureLogs } from './captured-logs';
import { fauxqsClientConfig, TestQueues } from './sqs-queues';

/**
 * What every spec of a polling host (SqsModule's consumers, SqsServer) sets up around its tests:
 * queues on fauxqs, apps that poll them, the log lines an operator would read, and the cleanup
 * (every app closed after its test, whatever the test did; every queue deleted after the file).
 * Tests wait on what they can observe (`waitFor` of ./sqs-queues), never on a guessed sleep.
 */

/** Anything a test starts and the harness closes: a Nest app, a microservice, a proxy. */
export interface Closable {
  close(): Promise<unknown> | unknown;
}

export interface PollingAppOptions extends SqsModuleOptions {
  /** `IdempotencyModule.forRoot()` options. Default: an in-memory store. */
  idempotency?: IdempotencyModuleOptions;
  imports?: ModuleMetadata['imports'];
  providers?: ModuleMetadata['providers'];
}

/**
 * A Nest app (Test.createTestingModule, init and bootstrap) whose `SqsModule` polls fauxqs: the
 * emulator's client and a 1 s long poll (so a closing app does not wait out 20 s), unless the
 * options say otherwise.
 */
export async function startPollingApp(options: PollingAppOptions = {}): Promise<TestingModule> {
  const { idempotency = {}, imports = [], providers = [], ...sqs } = options;
  const moduleRef = await Test.createTestingModule({
    imports: [
      IdempotencyModule.forRoot(idempotency),
      SqsModule.forRoot({ waitTimeSeconds: 1, client: fauxqsClientConfig(), ...sqs }),
      ...imports,
    ],
    providers,
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

export interface PollingHarness {
  /** Creates (uniquely named), sends to and inspects queues; every queue is deleted after the file. */
  readonly queues: TestQueues;
  /** The Nest log lines of the running test (with `captureLogs`, the default). */
  readonly logged: string[];
  /** Starts a polling app (`startPollingApp`), closed after the test. */
  startApp(options?: PollingAppOptions): Promise<TestingModule>;
  /** Tracks what a fixture started (`startShippingApp(...)`, a microservice, a proxy): closed after the test. */
  start<T extends Closable>(started: T | Promise<T>): Promise<T>;
  /** Closes one now (a test about shutdown), and not again after the test. */
  close(started: Closable): Promise<void>;
}

/**
 * Registers the hooks of a polling spec in the enclosing `describe` and returns its harness:
 * - before each test, Nest's log lines are captured (`logged`) rather than printed, unless
 *   `captureLogs: false` (a fixture that reads its own logger's lines);
 * - after each test, whatever it started is closed, latest first (an app before the proxy it
 *   polls through), and Jest's spies are restored;
 * - after the file, its queues are deleted.
 */
export function usePollingHarness(options: { captureLogs?: boolean } = {}): PollingHarness {
  const queues = new TestQueues();
  const started: Closable[] = [];
  let logged: string[] = [];

  if (options.captureLogs !== false) {
    beforeEach(() => {
      logged = captureLogs();
    });
  }
  afterEach(async () => {
    try {
      for (const closable of started.splice(0).reverse()) await closable.close();
    } finally {
      jest.restoreAllMocks();
    }
  });
  afterAll(() => queues.deleteAll());

  const harness: PollingHarness = {
    queues,
    get logged() {
      return logged;
    },
    startApp: (appOptions) => harness.start(startPollingApp(appOptions)),
    async start(starting) {
      const closable = await starting;
      started.push(closable);
      return closable;
    },
    async close(closable) {
      const index = started.indexOf(closable);
      if (index >= 0) started.splice(index, 1);
      await closable.close();
    },
  };
  return harness;
}
