import { Injectable } from '@nestjs/common';
import { Idempotent, SqsContext, SqsMessageHandler } from '../../lib';
import { OrderCreated } from './order-created.event';
import { Warehouse } from './warehouse.service';

/** Ships each order once, however often SQS delivers its event. */
@Injectable()
export class OrdersHandler {
  constructor(private readonly warehouse: Warehouse) {}

  @SqsMessageHandler(OrderCreated)
  @Idempotent()
  async onOrderCreated(event: OrderCreated, _ctx: SqsContext): Promise<void> {
    await this.warehouse.ship(event.orderId);
  }
}

/** The same handler without `@Idempotent()` (`npm start -- --unsafe`): what at-least-once does alone. */
@Injectable()
export class UnsafeOrdersHandler {
  constructor(private readonly warehouse: Warehouse) {}

  @SqsMessageHandler(OrderCreated)
  async onOrderCreated(event: OrderCreated): Promise<void> {
    await this.warehouse.ship(event.orderId);
  }
}
