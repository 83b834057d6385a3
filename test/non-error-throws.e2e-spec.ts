import { Injectable } from '@nestjs/common';
import { IsString } from 'class-validator';
import { Idempotent, SqsEvent, SqsMessageHandler } from '../lib';
import { createTestApp } from './support/test-app';

@SqsEvent('thrown')
class Thrown {
  @IsString() id!: string;
  @IsString() what!: string;
}

const THROWN: Record<string, unknown> = {
  string: 'warehouse said no',
  undefined: undefined,
  null: null,
  number: 42,
  object: { code: 'E_STOCK' },
};

@Injectable()
class ThrowingHandler {
  @SqsMessageHandler(Thrown)
  @Idempotent()
  async onThrown(event: Thrown): Promise<void> {
    throw THROWN[event.what];
  }
}

/**
 * JavaScript can throw anything. A handler that throws a string, `undefined` or `null` still fails
 * its record, and the record's log line says what was thrown (it used to log no `reason=` at all).
 */
describe('a handler that throws something other than an Error', () => {
  it.each([
    ['string', 'the handler threw the string "warehouse said no", not an Error'],
    ['undefined', 'the handler threw undefined, not an Error'],
    ['null', 'the handler threw null, not an Error'],
    ['number', 'the handler threw number 42, not an Error'],
    ['object', 'the handler threw the object {"code":"E_STOCK"}, not an Error'],
  ])('fails the record and logs what was thrown: %s', async (what, reason) => {
    const app = await createTestApp({ providers: [ThrowingHandler] });
    try {
      const { status, result } = await app.sqs.send({ type: 'thrown', id: `t-${what}`, what });
      expect(status).toBe('FAILED');
      expect(result.error?.message).toBe(reason);
      const [line] = app.logs.matching('error', /^status=FAILED type=thrown/);
      expect(line).toContain(`reason=${JSON.stringify(reason)}`);
      // The claim was released: a redelivery runs the handler again.
      expect((await app.sqs.send({ type: 'thrown', id: `t-${what}`, what })).status).toBe('FAILED');
      expect(app.logs.matching('error', /^status=FAILED type=thrown/)).toHaveLength(2);
    } finally {
      await app.close();
    }
  });
});
