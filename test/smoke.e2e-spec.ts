import { Test } from '@nestjs/testing';
import { IdempotencyModule, SqsModule } from '../lib';
import { SqsTestClient } from '../lib/testing';
import { OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';

describe('smoke', () => {
  it('runs once, skips the duplicate', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({}), OrdersModule],
    }).compile();
    await moduleRef.init();
    const sqs = new SqsTestClient(moduleRef);
    const first = await sqs.send(orderCreated('e1'));
    const second = await sqs.send(orderCreated('e1'));
    expect([first.status, second.status]).toEqual(['OK', 'DUPLICATE']);
    expect(moduleRef.get(OrdersLedger).count('order-e1')).toBe(1);
    await moduleRef.close();
  });
});
