import { ArgumentsHost, Catch, ExceptionFilter, Injectable, UseFilters } from '@nestjs/common';
import { IsString } from 'class-validator';
import { SqsMessageHandler } from '../lib';
import { OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { createTestApp, TestApp } from './support/test-app';

/**
 * A failing record is logged once: the `SqsRecord` line with the outcome, its key and message id,
 * and the stack of what the handler threw. Nest's own `ExceptionsHandler` line is not written for
 * SQS handlers; the app's exception filters still run as they do elsewhere.
 */
class RefundRequested {
  @IsString() id!: string;
}
class RefundRefused extends Error {
  override name = 'RefundRefused';
}

@Catch(RefundRefused)
class RefundFilter implements ExceptionFilter {
  static seen = 0;
  catch(exception: RefundRefused, _host: ArgumentsHost): never {
    RefundFilter.seen++;
    throw exception; // looked at, not handled: the record still fails
  }
}

@Injectable()
class RefundsHandler {
  @SqsMessageHandler(RefundRequested)
  @UseFilters(RefundFilter)
  async onRefund(): Promise<void> {
    throw new RefundRefused('refunds are closed today');
  }
}

describe('the log of a failing record', () => {
  let app: TestApp | undefined;
  afterEach(() => app?.close());

  it('is one SqsRecord line with the stack, and no ExceptionsHandler line', async () => {
    app = await createTestApp({ imports: [OrdersModule] });
    app.get(OrdersLedger).script.set('o-1', 'fail');

    const { status } = await app.sqs.send(orderCreated('1', 'o-1'));

    expect(status).toBe('FAILED');
    const errors = app.logs.lines.filter((line) => line.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0].context).toBe('SqsRecord');
    expect(errors[0].message).toMatch(
      /^status=FAILED type=order_created key=\S+ messageId=\S+ .*reason="shipping o-1 failed"$/,
    );
    expect(errors[0].stack).toMatch(/^Error: shipping o-1 failed\n\s+at OrdersHandler\.onOrderCreated/);
  });

  it("still runs the app's exception filters first, and logs what they rethrow once", async () => {
    app = await createTestApp({ providers: [RefundsHandler] });

    const { status } = await app.sqs.send({ id: 'r-1' });

    expect(status).toBe('FAILED');
    expect(RefundFilter.seen).toBe(1);
    const errors = app.logs.lines.filter((line) => line.level === 'error');
    expect(errors.map((line) => line.context)).toEqual(['SqsRecord']);
    expect(errors[0].stack).toContain('RefundRefused: refunds are closed today');
  });

  it('carries no stack for the library’s own errors, whose message says it all', async () => {
    app = await createTestApp({ imports: [OrdersModule] });

    const { status } = await app.sqs.send({ type: 'order_created', id: 'x', orderId: 'o-2', amount: 0 });

    expect(status).toBe('INVALID');
    const errors = app.logs.lines.filter((line) => line.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0].stack).toBeUndefined();
  });
});
