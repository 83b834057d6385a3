import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  createSqsLambdaHandler,
  IdempotencyModule,
  SqsConsumerEventHandler,
  SqsConsumerManager,
  SqsMessageHandler,
  SqsModule,
  SqsModuleOptions,
} from '../lib';
import { SqsServer } from '../lib/microservices';
import { SqsTestClient } from '../lib/testing';
import { OrderCancelled, OrderCreated } from './fixtures/orders.fixture';
import { fauxqsClientConfig } from './support/sqs-queues';
import { usePollingHarness } from './support/polling-harness';

@Injectable()
class PaymentsHandler {
  @SqsMessageHandler(OrderCreated, { queue: 'payments' })
  async onOrderCreated(): Promise<void> {}
}

@Injectable()
class UnboundHandler {
  @SqsMessageHandler(OrderCancelled)
  async onOrderCancelled(): Promise<void> {}
}

@Injectable()
class PaymentsAlerts {
  @SqsConsumerEventHandler('payments', 'processing_error')
  onFailure(): void {}
}

/** Compiles and initialises an app; resolves the bootstrap error, if any. */
async function bootstrapError(sqs: SqsModuleOptions, providers: unknown[]): Promise<Error | undefined> {
  const moduleRef = await Test.createTestingModule({
    imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({ client: fauxqsClientConfig(), ...sqs })],
    providers: providers as never[],
  }).compile();
  try {
    await moduleRef.init();
    return undefined;
  } catch (error) {
    return error as Error;
  } finally {
    await moduleRef.close().catch(() => undefined);
  }
}

describe('SqsModule bootstrap checks', () => {
  const polling = usePollingHarness();

  const orders = { name: 'orders', url: 'http://sqs.us-east-1.localhost:1/000000000000/orders' };

  it('refuses a handler bound to a queue that is not configured', async () => {
    const error = await bootstrapError({ queues: [orders], autoStart: false }, [PaymentsHandler]);
    expect(error?.message).toContain(
      'PaymentsHandler.onOrderCreated is bound to queue "payments", which SqsModule does not configure (queues: "orders")',
    );
  });

  it('refuses a handler without queue when several queues are consumed', async () => {
    const payments = { name: 'payments', url: 'http://sqs.us-east-1.localhost:1/000000000000/payments' };
    const error = await bootstrapError({ queues: [orders, payments], autoStart: false }, [UnboundHandler]);
    expect(error?.message).toContain(
      'UnboundHandler.onOrderCancelled has no queue, and SqsModule consumes several ("orders", "payments")',
    );
  });

  it('refuses an event listener of a queue that is not configured', async () => {
    const error = await bootstrapError({ queues: [orders], autoStart: false }, [PaymentsAlerts]);
    expect(error?.message).toContain(
      `PaymentsAlerts.onFailure listens to 'processing_error' of queue "payments"`,
    );
  });

  it('refuses them where nothing is polled too: queues without a url, and a Lambda handler', async () => {
    const misbound = [
      [
        PaymentsHandler,
        'PaymentsHandler.onOrderCreated is bound to queue "payments", which SqsModule does not',
      ],
      [PaymentsAlerts, `PaymentsAlerts.onFailure listens to 'processing_error' of queue "payments"`],
    ] as const;
    for (const [provider, message] of misbound) {
      expect((await bootstrapError({ queues: [{ name: 'orders' }] }, [provider]))?.message).toContain(
        message,
      );
      @Module({
        imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({ queues: [orders] })],
        providers: [provider],
      })
      class LambdaAppModule {}
      const handler = createSqsLambdaHandler(LambdaAppModule, { nestOptions: { logger: false } });
      await expect(handler.getApp()).rejects.toThrow(message);
      await handler.close();
    }
  });

  it('starts without polling a queue whose url is given but empty (an unset environment variable), and says so', async () => {
    const app = await polling.startApp({
      queues: [{ name: 'orders', url: undefined }],
      providers: [UnboundHandler],
    });
    const manager = app.get(SqsConsumerManager);
    expect(manager.queues).toEqual([]);
    expect(manager.isRunning('orders')).toBe(false);
    // A test module sends its records without autoStart: false.
    const { status } = await new SqsTestClient(app, { defaultQueue: 'orders' }).send({
      id: 'c-1',
      orderId: 'o-1',
    });
    expect(status).toBe('OK');
    expect(
      polling.logged.filter((line) =>
        line.includes('Queue "orders" has no url (undefined), so it is not polled'),
      ),
    ).toHaveLength(1);
  });

  it('refuses a queue whose url is empty when autoStart: true asks for polling in so many words', async () => {
    const error = await bootstrapError({ queues: [{ name: 'orders', url: '' }], autoStart: true }, [
      UnboundHandler,
    ]);
    expect(error?.message).toContain('queue "orders" has no url (""), so it cannot be polled');
  });

  it('refuses sqs-consumer options it rejects, naming the queue', async () => {
    const error = await bootstrapError({ queues: [{ ...orders, batchSize: 11 }], autoStart: false }, []);
    expect(error?.message).toBe('SqsModule: queue "orders": batchSize must be between 1 and 10.');
  });

  it('names SqsServer, not SqsModule, in the errors of the queues it polls', async () => {
    for (const [queue, message] of [
      [{ ...orders, batchSize: 11 }, 'SqsServer: queue "orders": batchSize must be between 1 and 10.'],
      [
        { ...orders, handleMessageTimeout: -1 },
        'SqsServer: queue "orders": handleMessageTimeout must be a positive number of milliseconds; got -1.',
      ],
    ] as const) {
      const server = new SqsServer({ client: fauxqsClientConfig(), queues: [queue] });
      const error = await new Promise<unknown>((resolve) => void server.listen(resolve));
      await server.close();
      expect((error as Error | undefined)?.message).toBe(message);
    }
  });

  it('start() of a queue with consume: false says that is why it is not polled', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        IdempotencyModule.forRoot({}),
        SqsModule.forRoot({
          client: fauxqsClientConfig(),
          queues: [orders, { name: 'audit', url: orders.url.replace('orders', 'audit'), consume: false }],
          autoStart: false,
        }),
      ],
    }).compile();
    await moduleRef.init();
    try {
      expect(() => moduleRef.get(SqsConsumerManager).start('audit')).toThrow(
        'SqsConsumerManager: queue "audit" has consume: false (this app only sends to it), so it is not polled. ' +
          'Remove consume: false to poll it.',
      );
    } finally {
      await moduleRef.close();
    }
  });

  it('starts with a handler bound to the only queue, and with queues that only carry dispatch options', async () => {
    expect(await bootstrapError({ queues: [orders], autoStart: false }, [UnboundHandler])).toBe(undefined);
    expect(await bootstrapError({ queues: [{ name: 'payments' }] }, [PaymentsHandler])).toBe(undefined);
  });

  it('takes its queues from forRootAsync() as well', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        IdempotencyModule.forRoot({}),
        SqsModule.forRootAsync({
          useFactory: async () => ({ queues: [orders], client: fauxqsClientConfig(), autoStart: false }),
        }),
      ],
      providers: [UnboundHandler],
    }).compile();
    await moduleRef.init();
    expect(moduleRef.get(SqsConsumerManager).queues).toEqual(['orders']);
    await moduleRef.close();
  });
});
