import { Injectable } from '@nestjs/common';
import { IsString } from 'class-validator';
import { SqsFallback, SqsMessageHandler } from '../lib';
import { createTestApp, TestApp } from './support/test-app';

/**
 * An event class is the contract of a message: what class-validator does not check reaches the
 * handler as sent. A class without any decorator accepts everything, so the app names it at
 * bootstrap; the validator options a `ValidationPipe` user knows (`whitelist`,
 * `forbidNonWhitelisted`) decide what happens to fields the class does not declare.
 */
class RefundRequested {
  id!: string;
  amount!: number;
}

class PaymentReceived {
  @IsString() id!: string;
}

@Injectable()
class RefundsHandler {
  readonly seen: object[] = [];
  @SqsMessageHandler(RefundRequested, { queue: 'refunds' })
  async onRefund(event: RefundRequested): Promise<void> {
    this.seen.push(event);
  }
}

/** A second handler of the unvalidated event: the warning names both. */
@Injectable()
class RefundsAuditHandler {
  @SqsMessageHandler(RefundRequested, { queue: 'refunds' })
  async onRefund(_event: RefundRequested): Promise<void> {}
}

/** Takes any payload as it is, by design: no event class, so nothing to warn about. */
@Injectable()
class LeftoversHandler {
  @SqsMessageHandler(SqsFallback, { queue: 'refunds' })
  async onAnything(_payload: unknown): Promise<void> {}
}

@Injectable()
class PaymentsHandler {
  readonly seen: object[] = [];
  @SqsMessageHandler(PaymentReceived, { queue: 'payments' })
  async onPayment(event: PaymentReceived): Promise<void> {
    this.seen.push(event);
  }
}

const queues = [{ name: 'refunds' }, { name: 'payments' }];

describe('event classes and validation', () => {
  let app: TestApp | undefined;
  afterEach(() => app?.close());

  it('names an event class without class-validator decorators at bootstrap, once', async () => {
    app = await createTestApp({ sqs: { queues }, providers: [RefundsHandler, PaymentsHandler] });
    const warnings = app.logs.lines.filter((line) => line.level === 'warn' && line.context === 'SqsModule');
    expect(warnings.map((line) => line.message)).toEqual([
      expect.stringMatching(
        /^RefundRequested \(the event of RefundsHandler\.onRefund\) has no class-validator decorators: .*validation: \{ validate: false \}/,
      ),
    ]);
    // What it warns about: any body gets through, every field copied.
    const { status } = await app.sqs.send({ id: 'r-1', amount: 'lots', admin: true }, { queue: 'refunds' });
    expect(status).toBe('OK');
    expect(app.get(RefundsHandler).seen).toEqual([{ id: 'r-1', amount: 'lots', admin: true }]);
  });

  it('names every handler of such a class in the one warning, and says what to do', async () => {
    app = await createTestApp({ sqs: { queues }, providers: [RefundsHandler, RefundsAuditHandler] });
    const warnings = app.logs.lines.filter((line) => line.level === 'warn' && line.context === 'SqsModule');
    expect(warnings).toHaveLength(1);
    const [{ message }] = warnings;
    expect(message).toContain(
      'RefundRequested (the event of RefundsHandler.onRefund, RefundsAuditHandler.onRefund)',
    );
    expect(message).toContain(
      'its messages are accepted unchecked, with every field of the body copied onto it',
    );
    expect(message).toContain('Decorate its fields (@IsString(), @IsInt(), ...), or set SqsModule');
  });

  it('says nothing of a fallback handler, which takes payloads unvalidated by design', async () => {
    app = await createTestApp({ sqs: { queues }, providers: [LeftoversHandler, PaymentsHandler] });
    expect(app.logs.lines.filter((line) => line.level === 'warn' && line.context === 'SqsModule')).toEqual(
      [],
    );
  });

  it('says nothing when validation is turned off on purpose', async () => {
    app = await createTestApp({
      sqs: { queues, validation: { validate: false } },
      providers: [RefundsHandler, PaymentsHandler],
    });
    expect(app.logs.lines.filter((line) => line.level === 'warn' && line.context === 'SqsModule')).toEqual(
      [],
    );
  });

  it('strips undeclared fields with whitelist, and refuses them with forbidNonWhitelisted', async () => {
    app = await createTestApp({
      sqs: { queues: [{ name: 'payments', validation: { validatorOptions: { whitelist: true } } }] },
      providers: [PaymentsHandler],
    });
    expect((await app.sqs.send({ id: 'p-1', admin: true }, { queue: 'payments' })).status).toBe('OK');
    expect(app.get(PaymentsHandler).seen).toEqual([{ id: 'p-1' }]);
    await app.close();

    app = await createTestApp({
      sqs: {
        queues: [
          {
            name: 'payments',
            validation: { validatorOptions: { whitelist: true, forbidNonWhitelisted: true } },
          },
        ],
      },
      providers: [PaymentsHandler],
    });
    const refused = await app.sqs.send({ id: 'p-2', admin: true }, { queue: 'payments' });
    expect(refused.status).toBe('INVALID');
    expect(refused.result.error?.message).toContain('property admin should not exist');
    expect(app.get(PaymentsHandler).seen).toEqual([]);
  });
});
