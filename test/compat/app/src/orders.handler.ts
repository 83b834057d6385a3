import { Injectable } from '@nestjs/common';
import { Idempotent, IdempotencyKey, SqsContext, SqsMessageHandler } from 'nestjs-idempotent-sqs';
import { OrderPlaced } from './order-placed.event.js';

@Injectable()
export class OrdersHandler {
  /** What the handler did, to assert that it ran once per event. */
  readonly shipped: Array<{ orderId: string; key: string; queue: string }> = [];

  @SqsMessageHandler(OrderPlaced)
  @Idempotent()
  async onOrderPlaced(event: OrderPlaced, ctx: SqsContext, @IdempotencyKey() key: string): Promise<void> {
    this.shipped.push({ orderId: event.orderId, key, queue: ctx.queue });
  }
}
