import { DynamicModule, Module, Provider } from '@nestjs/common';
import { IdempotencyModule, IdempotencyStore, SqsClientOption, SqsModule } from '../../lib';
import { OrdersHandler, UnsafeOrdersHandler } from './orders.handler';
import { Warehouse } from './warehouse.service';

/** How one instance of the orders service is wired. */
export interface OrdersAppOptions {
  queueUrl: string;
  client: SqsClientOption;
  /** The idempotency store; instances that consume one queue must share it (Redis, or one in-memory instance). */
  store: IdempotencyStore;
  /** Namespaces the keys of one run, so runs sharing a Redis never see each other's keys. */
  keyPrefix: string;
  /** The warehouse every instance ships through. */
  warehouse: Warehouse;
  /** Seconds SQS hides a received message; short, so redeliveries show up quickly. */
  visibilityTimeout: number;
  /** Run the handler without `@Idempotent()`. */
  unsafe?: boolean;
  /** Extra providers (the demo's instrumentation). */
  providers?: Provider[];
}

/** The orders service: one queue, one idempotent handler. Each worker of the demo is one instance. */
@Module({})
export class OrdersAppModule {
  static forRoot(options: OrdersAppOptions): DynamicModule {
    return {
      module: OrdersAppModule,
      imports: [
        IdempotencyModule.forRoot({ store: options.store, keyPrefix: options.keyPrefix }),
        SqsModule.forRoot({
          queues: [{ name: 'orders', url: options.queueUrl }],
          client: options.client,
          visibilityTimeout: options.visibilityTimeout,
          shutdownTimeoutMs: 10_000,
        }),
      ],
      providers: [
        { provide: Warehouse, useValue: options.warehouse },
        options.unsafe ? UnsafeOrdersHandler : OrdersHandler,
        ...(options.providers ?? []),
      ],
    };
  }
}
