// The bare Nest floor: the Quick start's event, service and handler without this library. A Nest
// application context, each record parsed, mapped with class-transformer and validated with
// class-validator as the library does, then the handler's method called, around a claim written
// by hand on the store (`claim` answers whether to run; `complete` records the success).
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { plainToInstance } from 'class-transformer';
import { IsInt, IsString, Min, validate } from 'class-validator';

export class OrderCreated {
  @IsString() id!: string;
  @IsString() orderId!: string;
  @IsInt() @Min(1) amount!: number;
}

@Injectable()
export class OrdersService {
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

  async onOrderCreated(event: OrderCreated): Promise<void> {
    if (await this.orders.alreadyShipped(event.orderId)) return;
    await this.orders.ship(event.orderId);
  }
}

@Module({ providers: [OrdersHandler, OrdersService] })
export class AppModule {}

/** A hand-written claim on a store: `false` when the key was seen before. */
export interface FloorStore {
  claim(key: string): Promise<boolean>;
  complete(key: string): Promise<void>;
  release(key: string): Promise<void>;
}

interface SqsEventLike {
  Records: Array<{ messageId: string; body: string }>;
}

/** A Lambda handler over the bare Nest app, each record claimed on `store` when one is given. */
export function floorHandler(store?: FloorStore) {
  let app: Promise<INestApplicationContext> | undefined;
  return async (event: SqsEventLike) => {
    const handler = (await (app ??= NestFactory.createApplicationContext(AppModule))).get(OrdersHandler);
    const batchItemFailures: Array<{ itemIdentifier: string }> = [];
    await Promise.all(
      event.Records.map(async (record) => {
        try {
          const order = plainToInstance(OrderCreated, JSON.parse(record.body) as object);
          const errors = await validate(order, { forbidUnknownValues: false });
          if (errors.length > 0) throw new Error(`invalid: ${errors.map(String).join('; ')}`);
          if (store && !(await store.claim(order.id))) return;
          try {
            await handler.onOrderCreated(order);
          } catch (error) {
            await store?.release(order.id);
            throw error;
          }
          await store?.complete(order.id);
        } catch {
          batchItemFailures.push({ itemIdentifier: record.messageId });
        }
      }),
    );
    return { batchItemFailures };
  };
}
