import { SqsContext } from '../sqs-context';
import type { SqsHandlerDefinition } from '../nest/sqs-handler.explorer';
import { SqsQueueRouter } from './sqs-queue.router';

class OrderCreated {}

function handler(queue: string | undefined): SqsHandlerDefinition {
  return {
    name: `Handler.on_${queue}`,
    eventClass: OrderCreated,
    method: () => undefined,
    classRef: OrderCreated,
    eventType: 'order_created',
    queue,
    invoke: async () => undefined,
  };
}

describe('SqsQueueRouter', () => {
  const context = new SqsContext({ messageId: 'm-1', body: '{}' }, 'prod-orders');

  it('routes a handler bound by another name of the queue (configured name vs. name in the ARN)', () => {
    const router = new SqsQueueRouter(
      'prod-orders',
      [handler('orders')],
      { field: 'type' },
      {
        aliases: ['orders'],
      },
    );
    expect(router.resolve({ type: 'order_created' }, context).handlers.map((h) => h.name)).toEqual([
      'Handler.on_orders',
    ]);
  });

  it('leaves out handlers bound to other queues, and keeps unbound ones', () => {
    const router = new SqsQueueRouter('orders', [handler('payments'), handler(undefined)], { field: 'type' });
    expect(router.resolve({ type: 'order_created' }, context).handlers.map((h) => h.name)).toEqual([
      'Handler.on_undefined',
    ]);
  });
});
