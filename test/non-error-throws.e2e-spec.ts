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

@SqsEvent('decoded')
class Decoded {}

@Injectable()
class DecodedHandler {
  readonly seen: unknown[] = [];
  @SqsMessageHandler(Decoded)
  async onDecoded(event: Decoded): Promise<void> {
    this.seen.push(event);
  }
}

/**
 * The decoding stage runs the app's own functions too (a decoder, a discriminator): one that throws
 * a non-Error makes its record INVALID, saying what was thrown, and the rest of the batch runs (it
 * used to reject the whole batch, the record's reason being `undefined`).
 */
describe('a decoder or discriminator that throws something other than an Error', () => {
  it.each([
    ['undefined', undefined, 'decoding it threw undefined, not an Error'],
    ['null', null, 'decoding it threw null, not an Error'],
    ['string', 'no schema', 'decoding it threw the string "no schema", not an Error'],
    ['object', { code: 'E_SCHEMA' }, 'decoding it threw the object {"code":"E_SCHEMA"}, not an Error'],
    ['error-shaped object', { message: 'schema 7 unknown' }, 'schema 7 unknown'],
  ])('makes its record INVALID and says what was thrown: %s', async (_what, thrown, reason) => {
    for (const sqs of [
      { decoder: (text: unknown) => (text === 'throw' ? throwIt(thrown) : { type: 'decoded' }) },
      { discriminator: (body: Record<string, unknown>) => (body.fail ? throwIt(thrown) : 'decoded') },
    ]) {
      const app = await createTestApp({ sqs, providers: [DecodedHandler] });
      try {
        const bad = 'decoder' in sqs ? 'throw' : JSON.stringify({ fail: true });
        const { records, statuses, results } = await app.sqs.sendBatch([bad, JSON.stringify({ ok: 1 })]);
        expect(statuses).toEqual(['INVALID', 'OK']);
        expect(results[0].error?.message).toBe(
          `Message ${records[0].messageId} on queue "test-queue" is invalid: ${reason}. It was not handled and ` +
            'will reach the dead-letter queue after maxReceiveCount receives; fix the producer or the event ' +
            'class, then redrive it.',
        );
        expect(app.logs.matching('error', /^status=INVALID/)).toHaveLength(1);
        expect(app.get(DecodedHandler).seen).toHaveLength(1);
      } finally {
        await app.close();
      }
    }
  });
});

function throwIt(thrown: unknown): never {
  throw thrown;
}
