import { IsInt, IsString, Min } from 'class-validator';
import { SqsEvent } from 'nestjs-idempotent-sqs';

@SqsEvent('order_placed')
export class OrderPlaced {
  @IsString() id!: string;
  @IsString() orderId!: string;
  @IsInt() @Min(1) amount!: number;
}
