// The Quick start's src/app.module.ts, as the docs print it (the app a new user deploys).
import { Injectable, Module } from '@nestjs/common';
import { IsInt, IsString, Min } from 'class-validator';
import {
  Idempotent,
  IdempotencyModule,
  SkipMessageException,
  SqsContext,
  SqsEvent,
  SqsMessageHandler,
  SqsModule,
} from 'nestjs-idempotent-sqs';

@SqsEvent('order_created') // optional: default type is the class name in snake_case
export class OrderCreated {
  @IsString() id!: string; // the idempotency key (CloudEvents `id`) by default
  @IsString() orderId!: string;
  @IsInt() @Min(1) amount!: number;
}

@Injectable()
export class OrdersService {
  // your domain code: here, an in-memory warehouse
  readonly shipped: string[] = [];

  async alreadyShipped(orderId: string): Promise<boolean> {
    return this.shipped.includes(orderId);
  }

  async ship(orderId: string): Promise<void> {
    this.shipped.push(orderId);
  }
}

@Injectable()
export class OrdersHandler {
  constructor(private readonly orders: OrdersService) {}

  @SqsMessageHandler(OrderCreated)
  @Idempotent() // or @Idempotent('metadata.eventId') or @Idempotent({ key: (e) => ... })
  async onOrderCreated(event: OrderCreated, _ctx: SqsContext) {
    if (await this.orders.alreadyShipped(event.orderId)) throw new SkipMessageException('already shipped');
    await this.orders.ship(event.orderId);
  }
}

@Module({
  imports: [
    IdempotencyModule.forRoot({ keyPath: 'id', ttl: 86_400_000 }), // in-memory store by default
    SqsModule.forRoot({ queues: [{ name: 'orders', url: process.env.ORDERS_QUEUE_URL }] }),
  ],
  providers: [OrdersHandler, OrdersService],
})
export class AppModule {}
