import { Injectable, Module } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, IsObject, IsOptional, IsString } from 'class-validator';
import { Idempotent, SqsEvent, SqsMessageHandler } from '../lib';
import { createTestApp, TestApp } from './support/test-app';

/**
 * What #37 saw, through a real Nest app fingerprinting the whole payload: two payloads that differ
 * only in a `Set` field (the event hashed both as `{}`), in an unparsable date (both an invalid
 * `Date`), or in an integer past 2^53 were one fingerprint, so the second was acked as a DUPLICATE
 * without running; a payload nested 2,000 levels failed with a message about cycles. The payload
 * as it arrived (#48) tells the first ones apart by their text; an integer JSON parsing rounded still
 * fails the record, naming the field.
 */

@SqsEvent('order_tagged')
class OrderTagged {
  @IsString() id!: string;
  /** class-transformer turns the body's array into a `Set` (the property's reflected type). */
  @IsOptional() @Type(() => String) @IsString({ each: true }) tags?: Set<string>;
  /** No `@IsDate()`: a body date that does not parse becomes an invalid `Date`. */
  @IsOptional() @Type(() => Date) due?: Date;
  @IsOptional() @IsInt() amount?: number;
  @IsOptional() @IsObject() tree?: object;
}

@Injectable()
class TaggedOrders {
  readonly handled: string[] = [];

  @SqsMessageHandler(OrderTagged)
  @Idempotent({ fingerprint: true })
  async onTagged(event: OrderTagged): Promise<void> {
    this.handled.push(event.id);
  }
}

@Module({ providers: [TaggedOrders] })
class TaggedOrdersModule {}

const nested = (depth: number, leaf: number) => {
  let tree: Record<string, unknown> = { leaf };
  for (let i = 0; i < depth; i++) tree = { child: tree };
  return tree;
};

describe('payload fingerprints of what JSON blurs, through a Nest app', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await createTestApp({ imports: [TaggedOrdersModule] });
  });
  afterEach(() => app.close());

  const send = (body: Record<string, unknown>) => app.sqs.send({ type: 'order_tagged', ...body });

  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['Set fields', { tags: ['gift'] }, { tags: ['express'] }],
    ['unparsable dates', { due: 'not a date' }, { due: 'no date' }],
    ['payloads nested 2,000 levels deep', { tree: nested(2_000, 1) }, { tree: nested(2_000, 2) }],
  ])(
    'tells two payloads apart by their %s: the second is a mismatch, not a duplicate',
    async (_, first, second) => {
      expect((await send({ id: 'e1', ...first })).status).toBe('OK');
      expect((await send({ id: 'e1', ...first })).status).toBe('DUPLICATE');
      const other = await send({ id: 'e1', ...second });
      expect(other.status).toBe('FAILED');
      expect(other.result.error?.name).toBe('IdempotencyFingerprintMismatchError');
      expect(app.get(TaggedOrders).handled).toEqual(['e1']);
    },
  );

  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      'an integer JSON rounded',
      { amount: 2 ** 53 + 2 },
      /the field amount is the integer 9007199254740994, beyond 2\^53/,
    ],
  ])('fails a record holding %s, naming the field, and never runs or acks it', async (_, fields, reason) => {
    const { status, result } = await send({ id: 'e2', ...fields });
    expect(status).toBe('FAILED');
    expect(result.error?.message).toMatch(reason);
    expect(result.error?.message).toContain('TaggedOrders.onTagged');
    expect(app.get(TaggedOrders).handled).toEqual([]);
  });
});
