import { Injectable, Module } from '@nestjs/common';
import { IsString } from 'class-validator';
import {
  createSqsLambdaHandler,
  IdempotencyModule,
  SqsEvent,
  SqsMessageHandler,
  SqsModule,
  SqsQueueOptions,
} from '../lib';
import { buildLambdaContext, buildSqsEvent, buildSqsRecord } from '../lib/testing';
import { CapturingLogger } from './support/capturing-logger';

/**
 * How a Lambda maps a record's eventSourceARN to a configured queue: by the queue's name, or the
 * name at the end of its url. A handler bound to a queue whose url is unset in the function is
 * reported at bootstrap instead of failing every record while the function looks healthy.
 */

@SqsEvent('order_created')
class OrderCreated {
  @IsString() id!: string;
}

@Injectable()
class Orders {
  readonly seen: string[] = [];
  @SqsMessageHandler(OrderCreated, { queue: 'orders' })
  async onOrder(event: OrderCreated): Promise<void> {
    this.seen.push(event.id);
  }
}

function lambdaFor(queue: SqsQueueOptions, options: { queue?: string } = {}) {
  @Module({
    imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({ queues: [queue] })],
    providers: [Orders],
  })
  class OrdersLambda {}
  const logs = new CapturingLogger();
  const handler = createSqsLambdaHandler(OrdersLambda, { ...options, nestOptions: { logger: logs } });
  // Records of the SQS queue "prod-orders", as its event source mapping delivers them.
  const invoke = () =>
    handler(
      buildSqsEvent([buildSqsRecord({ type: 'order_created', id: 'e-1' }, { queue: 'prod-orders' })]),
      buildLambdaContext(),
    );
  return { handler, logs, invoke };
}

describe('Lambda queue names', () => {
  it('reports at bootstrap a handler bound to a queue whose url is unset, and says why its records fail', async () => {
    const { handler, logs, invoke } = lambdaFor({
      name: 'orders',
      url: process.env.UNSET_ORDERS_QUEUE_URL ?? '',
    });
    await handler.getApp();
    const [warning] = logs.find('warn', 'Orders.onOrder is bound to queue "orders"');
    expect(warning.context).toBe('SqsLambda');
    expect(warning.message).toContain('whose url is "" in this function (an unset environment variable?)');
    expect(warning.message).toContain("createSqsLambdaHandler(AppModule, { queue: 'orders' })");

    const response = await invoke();
    expect(response.batchItemFailures).toHaveLength(1);
    const [line] = logs.find('error', 'status=INVALID');
    expect(line.message).toContain(
      'no queue of SqsModule answers to \\"prod-orders\\" (configured: \\"orders\\")',
    );
    expect((await handler.getApp()).get(Orders).seen).toEqual([]);
    await handler.close();
  });

  it('maps the ARN to the queue by the name at the end of its url', async () => {
    const { handler, logs, invoke } = lambdaFor({
      name: 'orders',
      url: 'https://sqs.eu-west-1.amazonaws.com/123456789012/prod-orders',
    });
    expect((await invoke()).batchItemFailures).toEqual([]);
    expect((await handler.getApp()).get(Orders).seen).toEqual(['e-1']);
    expect(logs.find('warn', 'is bound to queue')).toEqual([]);
    await handler.close();
  });

  it('routes every record as one queue when the function is told which', async () => {
    const { handler, logs, invoke } = lambdaFor({ name: 'orders', url: '' }, { queue: 'orders' });
    expect((await invoke()).batchItemFailures).toEqual([]);
    expect(logs.find('warn', 'is bound to queue')).toEqual([]);
    await handler.close();
  });
});
