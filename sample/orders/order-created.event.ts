import { IsInt, IsString, Min } from 'class-validator';
import { SqsEvent } from '../../lib';

/** An order was placed; `id` is the event's id, the idempotency key. */
@SqsEvent('order_created')
export class OrderCreated {
  @IsString() id!: string;
  @IsString() orderId!: string;
  @IsInt() @Min(1) amount!: number;
}
