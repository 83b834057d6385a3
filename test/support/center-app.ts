import { CanActivate, ExecutionContext, INestApplication, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { IdempotencyCenterModule, IdempotencyCenterOptions } from '../../lib/center';
import { IdempotencyModule, IdempotencyModuleOptions, SqsModule, SqsModuleOptions } from '../../lib';
import { SqsTestClient } from '../../lib/testing';
import { OrdersLedger, OrdersModule } from '../fixtures/orders.fixture';
import { CapturingLogger } from './capturing-logger';

/** Lets a request through when it carries `x-admin: yes` (what the Center's specs send). */
export class AdminGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.switchToHttp().getRequest().headers['x-admin'] === 'yes';
  }
}

export interface CenterApp {
  app: INestApplication;
  /** `http://127.0.0.1:<port>`. */
  base: string;
  sqs: SqsTestClient;
  ledger: OrdersLedger;
  close(): Promise<void>;
}

/**
 * A real HTTP app with the orders fixture and the Idempotency Center behind {@link AdminGuard},
 * listening on a free port.
 */
export async function serveCenterApp(
  options: {
    idempotency?: IdempotencyModuleOptions;
    sqs?: SqsModuleOptions;
    center?: IdempotencyCenterOptions;
  } = {},
): Promise<CenterApp> {
  @Module({
    imports: [
      IdempotencyModule.forRoot(options.idempotency ?? {}),
      SqsModule.forRoot(options.sqs ?? {}),
      OrdersModule,
      IdempotencyCenterModule.forRoot({ guards: [AdminGuard], ...options.center }),
    ],
  })
  class CenterAppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [CenterAppModule] })
    .setLogger(new CapturingLogger())
    .compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  return {
    app,
    base: (await app.getUrl()).replace('[::1]', '127.0.0.1'),
    sqs: new SqsTestClient(app),
    ledger: app.get(OrdersLedger),
    close: () => app.close(),
  };
}
