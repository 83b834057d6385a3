// The Quick start on the shared Redis store, as the Redis store's docs configure it.
import { Module } from '@nestjs/common';
import { createSqsLambdaHandler, IdempotencyModule, SqsModule } from 'nestjs-idempotent-sqs';
import { RedisIdempotencyStore } from 'nestjs-idempotent-sqs/redis';
import { OrdersHandler, OrdersService } from './quick-start/app.module';

@Module({
  imports: [
    IdempotencyModule.forRoot({
      store: new RedisIdempotencyStore(process.env.REDIS_URL!),
      keyPath: 'id',
      ttl: 86_400_000,
    }),
    SqsModule.forRoot({ queues: [{ name: 'orders', url: process.env.ORDERS_QUEUE_URL }] }),
  ],
  providers: [OrdersHandler, OrdersService],
})
export class AppModule {}

export const handler = createSqsLambdaHandler(AppModule);
