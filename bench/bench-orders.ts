import { Injectable } from '@nestjs/common';
import { IsInt, IsString, Min } from 'class-validator';
import { Idempotent, SqsEvent, SqsMessageHandler } from '../lib';

/**
 * The event every Lambda-path bench sends (`newPayload` in bench-redis.ts builds its bodies) and the
 * two no-op handlers they compare: with and without `@Idempotent()`. One definition, so that the
 * benches measure the same validation and routing work.
 */
@SqsEvent('order_created')
export class OrderCreated {
  @IsString() id!: string;
  @IsString() orderId!: string;
  @IsInt() @Min(1) amount!: number;
}

/** A no-op handler behind `@Idempotent()`. */
@Injectable()
export class IdempotentOrdersHandler {
  @SqsMessageHandler(OrderCreated)
  @Idempotent()
  async onOrderCreated(_event: OrderCreated): Promise<void> {}
}

/** The same handler without it. */
@Injectable()
export class PlainOrdersHandler {
  @SqsMessageHandler(OrderCreated)
  async onOrderCreated(_event: OrderCreated): Promise<void> {}
}
