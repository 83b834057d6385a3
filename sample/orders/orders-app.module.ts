import { DynamicModule, Module, Provider } from '@nestjs/common';
import { IdempotencyCenterModule, IdempotencyStatsStore } from '../../lib/center';
import { IdempotencyModule, IdempotencyStore, SqsModule } from '../../lib';
import { SqsClientOption } from '../../lib/types';
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
  /** Counters shared by the instances, so the Idempotency Center shows them all. */
  statsStore?: IdempotencyStatsStore;
  /** Serve the Idempotency Center (an HTTP app); open, as this is a local demo. */
  center?: boolean;
  /** Poll the queue (default true); the Center's instance only serves the page. */
  consume?: boolean;
}

/** The orders service: one queue, one idempotent handler. Each worker of the demo is one instance. */
@Module({})
export class OrdersAppModule {
  static forRoot(options: OrdersAppOptions): DynamicModule {
    return {
      module: OrdersAppModule,
      imports: [
        IdempotencyModule.forRoot({
          store: options.store,
          // This app is the orders service: its keys stay apart from other services' on a shared Redis.
          service: 'orders',
          keyPrefix: options.keyPrefix,
          stats: options.statsStore ? { store: options.statsStore, flushIntervalMs: 200 } : undefined,
        }),
        SqsModule.forRoot({
          queues: [{ name: 'orders', url: options.queueUrl }],
          client: options.client,
          visibilityTimeout: options.visibilityTimeout,
          shutdownTimeoutMs: 10_000,
          autoStart: options.consume ?? true,
        }),
        ...(options.center ? [IdempotencyCenterModule.forRoot({ allowAnonymous: true })] : []),
      ],
      providers: [
        { provide: Warehouse, useValue: options.warehouse },
        options.unsafe ? UnsafeOrdersHandler : OrdersHandler,
        ...(options.providers ?? []),
      ],
    };
  }
}
