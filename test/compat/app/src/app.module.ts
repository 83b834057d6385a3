import { Module } from '@nestjs/common';
import { IdempotencyModule, SqsModule } from 'nestjs-idempotent-sqs';
import { OrdersHandler } from './orders.handler.js';

@Module({
  imports: [
    IdempotencyModule.forRoot({ keyPath: 'id' }),
    SqsModule.forRoot({
      // Tests and the Lambda handler never poll this placeholder URL; the polling check builds its own.
      queues: [{ name: 'orders', url: 'http://127.0.0.1:9/000000000000/orders' }],
      autoStart: false,
    }),
  ],
  providers: [OrdersHandler],
})
export class AppModule {}
