import { Module } from '@nestjs/common';
import { IdempotencyModule, SqsModule } from 'nestjs-idempotent-sqs';
import { OrdersHandler } from './orders.handler.js';

@Module({
  imports: [
    IdempotencyModule.forRoot({ keyPath: 'id' }),
    SqsModule.forRoot({
      // POLLING HOOK (issue 3): add `autoStart: false` here once SqsModule has the polling host,
      // so that Test.createTestingModule and the Lambda handler never poll this placeholder URL.
      queues: [{ name: 'orders', url: 'http://127.0.0.1:9/000000000000/orders' }],
    }),
  ],
  providers: [OrdersHandler],
})
export class AppModule {}
