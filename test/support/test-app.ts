import type { DynamicModule, ModuleMetadata, Type } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { IdempotencyModule, IdempotencyModuleOptions, SqsModule, SqsModuleOptions } from '../../lib';
import { SqsTestClient } from '../../lib/testing';
import type { SqsTestClientOptions } from '../../lib/testing';
import { CapturingLogger } from './capturing-logger';

export interface TestAppOptions {
  idempotency?: IdempotencyModuleOptions;
  sqs?: SqsModuleOptions;
  imports?: Array<Type<unknown> | DynamicModule>;
  providers?: ModuleMetadata['providers'];
  client?: SqsTestClientOptions;
}

export interface TestApp {
  moduleRef: TestingModule;
  sqs: SqsTestClient;
  logs: CapturingLogger;
  get<T>(token: Type<T> | symbol | string): T;
  close(): Promise<void>;
}

/** A real Nest app (Test.createTestingModule) with IdempotencyModule, SqsModule and a test client. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const logs = new CapturingLogger();
  const moduleRef = await Test.createTestingModule({
    imports: [
      IdempotencyModule.forRoot(options.idempotency ?? {}),
      SqsModule.forRoot(options.sqs ?? {}),
      ...(options.imports ?? []),
    ],
    providers: options.providers ?? [],
  })
    .setLogger(logs)
    .compile();
  await moduleRef.init();
  return {
    moduleRef,
    logs,
    sqs: new SqsTestClient(moduleRef, options.client),
    get: (token) => moduleRef.get(token as never, { strict: false }),
    close: () => moduleRef.close(),
  };
}

/** A fake clock for the in-memory store: tests move time instead of sleeping. */
export class FakeClock {
  now = 1_000_000;
  readonly read = (): number => this.now;
  advance(ms: number): void {
    this.now += ms;
  }
}
