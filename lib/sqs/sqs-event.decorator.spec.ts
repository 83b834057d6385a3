import { getSqsEventType, SqsEvent, toSnakeCase } from './sqs-event.decorator';

describe('event type names', () => {
  it.each([
    ['OrderCreated', 'order_created'],
    ['HTTPRequestSent', 'http_request_sent'],
    ['Order2Paid', 'order2_paid'],
    ['ping', 'ping'],
  ])('%s → %s', (name, type) => expect(toSnakeCase(name)).toBe(type));

  it('uses the @SqsEvent name, else the class name; a subclass is its own event', () => {
    @SqsEvent('order.created.v1')
    class OrderCreated {}
    class OrderCreatedV2 extends OrderCreated {}
    expect(getSqsEventType(OrderCreated)).toBe('order.created.v1');
    expect(getSqsEventType(OrderCreatedV2)).toBe('order_created_v2');
  });

  it('refuses an empty name', () => {
    expect(() => SqsEvent('')).toThrow('type must be a non-empty string');
  });
});
