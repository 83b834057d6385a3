import {
  CallHandler,
  DynamicModule,
  ExecutionContext,
  Injectable,
  ModuleMetadata,
  NestInterceptor,
  Type,
} from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
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
  /**
   * Adds a no-op global interceptor (`APP_INTERCEPTOR`), which keeps every SQS handler on Nest's
   * pipeline rather than the direct path (`lib/sqs/nest/sqs-direct-call.ts`). Default:
   * `testAppDefaults.nestPipeline`, which a spec file sets to run a whole suite on Nest's path.
   */
  nestPipeline?: boolean;
}

/** Process-wide defaults of `createTestApp` (one spec file per Jest worker module registry). */
export const testAppDefaults = { nestPipeline: false };

/** Does nothing; its presence alone keeps SQS handlers on Nest's interceptor pipeline. */
@Injectable()
export class PassThroughInterceptor implements NestInterceptor {
  calls = 0;
  intercept(_context: ExecutionContext, next: CallHandler) {
    this.calls++;
    return next.handle();
  }
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
    providers: [
      ...(options.providers ?? []),
      ...((options.nestPipeline ?? testAppDefaults.nestPipeline)
        ? [{ provide: APP_INTERCEPTOR, useClass: PassThroughInterceptor }]
        : []),
    ],
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
