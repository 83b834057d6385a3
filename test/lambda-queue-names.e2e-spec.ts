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
    if (event.id.startsWith('fail')) throw new Error(`cannot take ${event.id}`);
    this.seen.push(event.id);
  }
}

function lambdaFor(queue: SqsQueueOptions, options: { queue?: string; others?: SqsQueueOptions[] } = {}) {
  @Module({
    imports: [
      IdempotencyModule.forRoot({}),
      SqsModule.forRoot({ queues: [queue, ...(options.others ?? [])] }),
    ],
    providers: [Orders],
  })
  class OrdersLambda {}
  const logs = new CapturingLogger();
  const handler = createSqsLambdaHandler(OrdersLambda, {
    queue: options.queue,
    nestOptions: { logger: logs },
  });
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

  it('lists every configured queue and says what to fix when the queue of a record matches none', async () => {
    const { handler, logs, invoke } = lambdaFor(
      { name: 'orders', url: '' },
      { others: [{ name: 'refunds' }] },
    );
    expect((await invoke()).batchItemFailures).toHaveLength(1);
    const [line] = logs.find('error', 'status=INVALID');
    expect(line.message).toContain('(configured: \\"orders\\", \\"refunds\\")');
    expect(line.message).toContain(
      'a queue is known by its name or the name at the end of its url: set the url of the queue this is ' +
        '(an unset environment variable?), or configure it under this name',
    );
    await handler.close();
  });

  it('gives no queue hint when the record comes from a configured queue, or when none is configured', async () => {
    // Records of a queue no handler serves: "refunds" is configured, "prod-refunds" is not (and
    // with no queue configured there is none to name).
    for (const [queues, source] of [
      [[{ name: 'orders' }, { name: 'refunds' }], 'refunds'],
      [[], 'prod-refunds'],
    ] as const) {
      const unserved = buildSqsRecord({ type: 'order_created', id: 'e-9' }, { queue: source });
      @Module({
        imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({ queues: [...queues] })],
        providers: [Orders],
      })
      class OrdersLambda {}
      const logs = new CapturingLogger();
      const handler = createSqsLambdaHandler(OrdersLambda, { nestOptions: { logger: logs } });
      expect((await handler(buildSqsEvent([unserved]), buildLambdaContext())).batchItemFailures).toHaveLength(
        1,
      );
      const [line] = logs.find('error', 'status=INVALID');
      // The reason ends where the queue is named: no hint, not even an empty one.
      expect(line.message).toContain(`on queue \\"${source}\\" (handled: none). It was not handled`);
      expect(line.message).not.toContain('no queue of SqsModule answers to');
      await handler.close();
    }
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

  it('keeps FIFO order on a queue whose url names a FIFO queue, though its name does not', async () => {
    // The function is told its queue by name ("orders"); only the url says FIFO.
    const { handler } = lambdaFor(
      { name: 'orders', url: 'https://sqs.eu-west-1.amazonaws.com/123456789012/prod-orders.fifo' },
      { queue: 'orders' },
    );
    const record = (id: string) =>
      buildSqsRecord({ type: 'order_created', id }, { queue: 'prod-orders.fifo', groupId: 'customer-1' });
    const batch = [record('fail-1'), record('e-2')];
    // The first record of the group fails: the one after it is not run, and both come back, in order.
    const response = await handler(buildSqsEvent(batch), buildLambdaContext());
    expect(response.batchItemFailures).toEqual(batch.map((r) => ({ itemIdentifier: r.messageId })));
    expect((await handler.getApp()).get(Orders).seen).toEqual([]);
    await handler.close();
  });

  it('routes every record as one queue when the function is told which', async () => {
    const { handler, logs, invoke } = lambdaFor({ name: 'orders', url: '' }, { queue: 'orders' });
    expect((await invoke()).batchItemFailures).toEqual([]);
    expect(logs.find('warn', 'is bound to queue')).toEqual([]);
    await handler.close();
  });
});
