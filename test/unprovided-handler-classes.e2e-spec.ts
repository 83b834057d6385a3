import { Injectable, Module } from '@nestjs/common';
import { IsInt, IsString, Min } from 'class-validator';
import {
  createSqsLambdaHandler,
  SqsEvent,
  SqsMessageHandler,
  SqsModule,
  SqsModuleOptions,
  SqsProducer,
} from '../lib';
import { buildLambdaContext, buildSqsEvent, buildSqsRecord } from '../lib/testing';
import { CapturingLogger } from './support/capturing-logger';
import { createTestApp } from './support/test-app';

/**
 * A class with `@SqsMessageHandler()` methods that the app does not provide is named at start-up
 * when its handlers could receive records there (its messages would fail as having no handler), and
 * only then: a producer that imports the event classes from the consumer's file, where the handler
 * class is declared too, sends to queues it does not consume and is told nothing.
 */

// What a consumer's file holds: the event class and its handler, side by side.
@SqsEvent('invoice_issued')
class InvoiceIssued {
  @IsString() id!: string;
  @IsInt() @Min(1) amount!: number;
}

@Injectable()
class InvoicesHandler {
  @SqsMessageHandler(InvoiceIssued, { queue: 'invoices' })
  async onIssued(): Promise<void> {}
}

@SqsEvent('refund_issued')
class RefundIssued {
  @IsString() id!: string;
}

@Injectable()
class RefundsHandler {
  @SqsMessageHandler(RefundIssued) // no queue: the consumer's app has one
  async onRefund(): Promise<void> {}
}

@SqsEvent('payment_taken')
class PaymentTaken {
  @IsString() id!: string;
}

@Injectable()
class PaymentsHandler {
  @SqsMessageHandler(PaymentTaken, { queue: 'payments' })
  async onPayment(): Promise<void> {}
}

/** The producer's own code: it imports only the event classes. */
@Injectable()
class Billing {
  constructor(readonly producer: SqsProducer) {}
}

// InvoicesHandler is provided by no app here: declaring it (loading the file) is what registers it.
void InvoicesHandler;

const WARNING = /@SqsMessageHandler\(\) methods but (is not a provider|are not providers)/;

async function startupWarnings(sqs: SqsModuleOptions, providers: Array<new (...args: never[]) => unknown>) {
  const app = await createTestApp({ sqs, providers });
  const lines = app.logs.matching('warn', WARNING, 'SqsHandlers');
  await app.close();
  return lines;
}

describe('a handler class the app does not provide', () => {
  it('is not named in a producer that sends to the queues its handlers are bound to (consume: false)', async () => {
    const invoices = {
      name: 'invoices',
      url: 'https://sqs.eu-west-1.amazonaws.com/1/invoices',
      consume: false,
    };
    expect(await startupWarnings({ queues: [invoices] }, [Billing])).toEqual([]);
  });

  it('is not named in a producer that declares no queue (it sends by URL)', async () => {
    expect(await startupWarnings({}, [Billing])).toEqual([]);
  });

  it('is not named in an app that consumes other queues only', async () => {
    const queues = [
      { name: 'payments' },
      { name: 'invoices', url: 'https://sqs.eu-west-1.amazonaws.com/1/invoices', consume: false },
    ];
    expect(await startupWarnings({ queues }, [PaymentsHandler, Billing])).toEqual([]);
  });

  it('is named where its queue is consumed, each class once', async () => {
    const lines = await startupWarnings({ queues: [{ name: 'invoices' }] }, [Billing]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^InvoicesHandler, RefundsHandler have @SqsMessageHandler\(\) methods/);
  });

  it('is named beside the handlers the app provides, when it declares no queues', async () => {
    const lines = await startupWarnings({}, [RefundsHandler]);
    expect(lines).toEqual([
      expect.stringMatching(/^InvoicesHandler, PaymentsHandler have @SqsMessageHandler\(\) methods/),
    ]);
  });

  it('is named in a Lambda function, whose queues come from its event source mappings', async () => {
    @Module({ imports: [SqsModule.forRoot({})] })
    class BillingLambda {}
    const logs = new CapturingLogger();
    const handler = createSqsLambdaHandler(BillingLambda, { nestOptions: { logger: logs } });
    try {
      await handler(
        buildSqsEvent([buildSqsRecord({ id: 'r-1' }, { queue: 'refunds' })]),
        buildLambdaContext(),
      );
    } finally {
      await handler.close();
    }
    expect(logs.matching('warn', WARNING, 'SqsHandlers')).toEqual([
      expect.stringMatching(/^InvoicesHandler, RefundsHandler, PaymentsHandler have/),
    ]);
  });

  it('is named alone, in full, when its queue is one of several the app declares', async () => {
    const queues = [
      { name: 'payments' },
      { name: 'invoices', url: 'https://sqs.eu-west-1.amazonaws.com/1/invoices', consume: false },
    ];
    expect(await startupWarnings({ queues }, [Billing])).toEqual([
      'PaymentsHandler has @SqsMessageHandler() methods but is not a provider of this app: Nest never creates them, ' +
        'so their handlers never run and their messages fail as having no handler. Add each to the providers of a ' +
        'module the app imports (if another app in this process provides it, ignore this).',
    ]);
  });

  // Declared last: from here on every app of this file has one more class it does not provide.
  it('is named when one of its handlers is bound to a queue the app consumes, though another is not', async () => {
    @Injectable()
    class LedgerHandler {
      @SqsMessageHandler(InvoiceIssued, { queue: 'invoices' })
      async onInvoice(): Promise<void> {}

      @SqsMessageHandler(PaymentTaken, { queue: 'payments' })
      async onPayment(): Promise<void> {}
    }
    void LedgerHandler;
    const queues = [
      { name: 'payments' },
      { name: 'invoices', url: 'https://sqs.eu-west-1.amazonaws.com/1/invoices', consume: false },
    ];
    expect(await startupWarnings({ queues }, [PaymentsHandler])).toEqual([
      expect.stringMatching(/^LedgerHandler has @SqsMessageHandler\(\) methods but is not a provider/),
    ]);
  });
});
