import type { SqsHandlerDefinition } from '../nest/sqs-handler.explorer';
import type { SqsConsumerEventListener } from './sqs-consumer-event.decorator';
import { checkQueueBindings } from './sqs-queue-bindings';

class OrderCreated {}

const handler = (queue?: string): SqsHandlerDefinition => ({
  name: 'OrdersHandler.onOrderCreated',
  eventClass: OrderCreated,
  method: () => undefined,
  classRef: OrderCreated,
  eventType: 'order_created',
  queue,
  invoke: async () => undefined,
});

const listener = (queue: string): SqsConsumerEventListener => ({
  name: 'OrdersAlerts.onFailure',
  queue,
  event: 'processing_error',
  listener: () => undefined,
});

describe('checkQueueBindings', () => {
  const orders = { name: 'orders', url: 'http://localhost/000000000000/prod-orders' };

  it('accepts handlers bound to a configured queue, by name or by the name in its URL', () => {
    expect(() =>
      checkQueueBindings(
        [orders, { name: 'payments' }],
        [handler('orders'), handler('prod-orders')],
        [listener('payments')],
      ),
    ).not.toThrow();
  });

  it('binds an unbound handler to the only queue', () => {
    expect(() => checkQueueBindings([orders], [handler()], [])).not.toThrow();
  });

  it('checks nothing when no queue is configured (Lambda names the queue by its ARN)', () => {
    expect(() => checkQueueBindings([], [handler('anything')], [listener('else')])).not.toThrow();
  });

  it('refuses a handler bound to a queue that is not configured, naming it and the configured queues', () => {
    expect(() => checkQueueBindings([orders], [handler('order')], [])).toThrow(
      /OrdersHandler\.onOrderCreated is bound to queue "order", which SqsModule does not configure \(queues: "orders"\)/,
    );
  });

  it('refuses an unbound handler when there are several queues', () => {
    expect(() => checkQueueBindings([orders, { name: 'payments' }], [handler()], [])).toThrow(
      /OrdersHandler\.onOrderCreated has no queue, and SqsModule consumes several \("orders", "payments"\): bind it with @SqsMessageHandler\(OrderCreated, \{ queue: '\.\.\.' \}\)/,
    );
  });

  it('refuses an event listener of a queue that is not configured, and a queue configured twice', () => {
    let message = '';
    try {
      checkQueueBindings([orders, { name: 'orders' }], [], [listener('payments')]);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain(`the queue name "orders" is configured twice`);
    expect(message).toContain(`OrdersAlerts.onFailure listens to 'processing_error' of queue "payments"`);
  });
});
