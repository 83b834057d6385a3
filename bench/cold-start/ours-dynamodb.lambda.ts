// The Quick start on the DynamoDB store, as the DynamoDB store's docs configure it (a client the
// store creates: region, credentials and endpoint from the environment).
import { Module } from '@nestjs/common';
import { createSqsLambdaHandler, IdempotencyModule, SqsModule } from 'nestjs-idempotent-sqs';
import { DynamoDbIdempotencyStore } from 'nestjs-idempotent-sqs/dynamodb';
import { OrdersHandler, OrdersService } from './quick-start/app.module';

@Module({
  imports: [
    IdempotencyModule.forRoot({
      store: new DynamoDbIdempotencyStore({ tableName: process.env.IDEMPOTENCY_TABLE! }),
      keyPath: 'id',
      ttl: 86_400_000,
    }),
    SqsModule.forRoot({ queues: [{ name: 'orders', url: process.env.ORDERS_QUEUE_URL }] }),
  ],
  providers: [OrdersHandler, OrdersService],
})
export class AppModule {}

export const handler = createSqsLambdaHandler(AppModule);
