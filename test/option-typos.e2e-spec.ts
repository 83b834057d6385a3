import { Injectable, Module } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, IsString, ValidateNested } from 'class-validator';
import {
  createSqsLambdaHandler,
  Idempotent,
  IdempotencyConfigurationError,
  IdempotencyModule,
  IdempotentOptions,
  InMemoryIdempotencyStore,
  SqsConfigurationError,
  SqsEvent,
  SqsMessageHandler,
  SqsModule,
} from '../lib';
import { IdempotencyCenterModule } from '../lib/center';
import { DynamoDbIdempotencyStore } from '../lib/stores/dynamodb';
import { PostgresIdempotencyStore } from '../lib/stores/postgres';
import { RedisIdempotencyStore } from '../lib/stores/redis';
import { OrderCreated, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { createTestApp } from './support/test-app';

/**
 * Typos ran with defaults (#37): `forRoot({ inProgressTTL })` kept the 5-minute lease,
 * `@Idempotent({ kepPath: 'orderId' })` fell back to `id` and acked a distinct event as a duplicate,
 * `@Idempotent(null | true | 42 | ['id'])` and `isGlobal: 'no'` were accepted, an arrow function as
 * `store` failed with Nest's error about something else; a key path naming no property of the event
 * class, and a handler class left out of `providers`, were only found per message. Now each stops
 * the app (or, for the class, warns) at start-up, naming the option and the nearest known one.
 */

/** A handler class declared with `options`, in a module of its own (a decorator error is thrown here). */
function handlerWith(options: unknown) {
  @Injectable()
  class Orders {
    @SqsMessageHandler(OrderCreated)
    @Idempotent(options as IdempotentOptions)
    async onCreated(): Promise<void> {}
  }
  @Module({ providers: [Orders] })
  class TyposModule {}
  return TyposModule;
}

describe('options with a typo or of the wrong type stop the app at start-up, naming the option', () => {
  it('IdempotencyModule.forRoot: an unknown name, with the nearest known one', async () => {
    const starting = createTestApp({
      idempotency: { inProgressTTL: 60_000 } as never,
      imports: [OrdersModule],
    });
    await expect(starting).rejects.toThrow(IdempotencyConfigurationError);
    await expect(
      createTestApp({ idempotency: { inProgressTTL: 60_000 } as never, imports: [OrdersModule] }),
    ).rejects.toThrow(
      /^IdempotencyModule\.forRoot\(\): unknown option "inProgressTTL"; did you mean "inProgressTtl"\? Known options: store, keyPath,/,
    );
  });

  it('IdempotencyModule.forRoot: isGlobal of the wrong type, and a store given as an arrow function', async () => {
    expect(() => IdempotencyModule.forRoot({ isGlobal: 'no' as never })).toThrow(
      'IdempotencyModule.forRoot(): isGlobal must be true or false, got string "no".',
    );
    await expect(
      createTestApp({ idempotency: { store: (() => new InMemoryIdempotencyStore()) as never } }),
    ).rejects.toThrow(/IdempotencyModule options: store is an arrow function, which Nest cannot instantiate/);
  });

  it('IdempotencyModule.forRootAsync: an unknown key of its own, and of what its factory returns', () => {
    expect(() => IdempotencyModule.forRootAsync({ useFactry: () => ({}) } as never)).toThrow(
      /IdempotencyModule\.forRootAsync\(\): unknown option "useFactry"; did you mean "useFactory"\?/,
    );
    const factoryTypo = async () => {
      const { Test } = await import('@nestjs/testing');
      const moduleRef = await Test.createTestingModule({
        imports: [IdempotencyModule.forRootAsync({ useFactory: () => ({ kepPrefix: 'x' }) as never })],
      }).compile();
      await moduleRef.close();
    };
    return expect(factoryTypo()).rejects.toThrow(
      /IdempotencyModule options: unknown option "kepPrefix"; did you mean "keyPrefix"\?/,
    );
  });

  it('IdempotencyModule: stats.activity other than false or an object, from forRoot and forRootAsync alike', async () => {
    const { Test } = await import('@nestjs/testing');
    const message = (got: string) =>
      `IdempotencyModule options: stats.activity must be false or an object ({ recentPerType }), got ${got}. ` +
      'Leave it out to keep the recent records, trends and claim latency; false turns them off.';
    for (const [activity, got] of [
      [true, 'boolean true'],
      [null, 'null'],
      ['on', 'string "on"'],
      [[], 'an array'],
    ] as const) {
      const fromForRoot = () => createTestApp({ idempotency: { stats: { activity: activity as never } } });
      const fromFactory = () =>
        Test.createTestingModule({
          imports: [
            IdempotencyModule.forRootAsync({
              useFactory: () => ({ stats: { activity: activity as never } }),
            }),
          ],
        }).compile();
      for (const start of [fromForRoot, fromFactory]) {
        const error: unknown = await start().then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(error).toBeInstanceOf(IdempotencyConfigurationError);
        expect((error as Error).message).toBe(message(got));
      }
    }
    const off = await createTestApp({ idempotency: { stats: { activity: false } }, imports: [OrdersModule] });
    await off.close();
  });

  it("@Idempotent({ kepPath: 'orderId' }) no longer falls back to id (a distinct event acked as a duplicate)", () => {
    expect(() => handlerWith({ kepPath: 'orderId' })).toThrow(
      /^@Idempotent\(\) on Orders\.onCreated: unknown option "kepPath"; did you mean "keyPath"\?/,
    );
    expect(() => handlerWith({ ttl: '1h' })).toThrow(
      '@Idempotent() on Orders.onCreated: ttl must be a number, got string "1h".',
    );
  });

  it.each([
    ['null', null, 'null'],
    ['true', true, 'boolean true'],
    ['42', 42, 'number 42'],
    ["['id']", ['id'], 'an array'],
  ])('@Idempotent(%s) is refused', (_, argument, described) => {
    expect(() => handlerWith(argument)).toThrow(
      `@Idempotent() on Orders.onCreated: expected a key path (@Idempotent('metadata.eventId')) or an options object (@Idempotent({ keyPath: 'orderId' })), got ${described}.`,
    );
  });

  it('SqsModule and each of its queues, the Lambda host, and the Center', async () => {
    expect(() => SqsModule.forRoot({ concurency: 5 } as never)).toThrow(
      /^SqsModule\.forRoot\(\): unknown option "concurency"; did you mean "concurrency"\?/,
    );
    expect(() =>
      SqsModule.forRoot({
        queues: [{ name: 'orders', url: 'https://q/orders', visiblityTimeout: 30 } as never],
      }),
    ).toThrow(
      /SqsModule\.forRoot\(\): queues\[0\] \("orders"\): unknown option "visiblityTimeout"; did you mean "visibilityTimeout"\?/,
    );
    expect(() => SqsModule.forRoot({ validation: { validat: false } as never })).toThrow(
      SqsConfigurationError,
    );
    expect(() => createSqsLambdaHandler(OrdersModule, { queu: 'orders' } as never)).toThrow(
      /createSqsLambdaHandler\(\) options: unknown option "queu"; did you mean "queue"\?/,
    );
    expect(() => IdempotencyCenterModule.forRoot({ allowAnonymus: true } as never)).toThrow(
      /IdempotencyCenterModule\.forRoot\(\): unknown option "allowAnonymus"; did you mean "allowAnonymous"\?/,
    );
  });

  it("SqsModule's tracing.parent other than 'ambient' or 'producer', naming SqsModule and what it got", async () => {
    await expect(
      createTestApp({ sqs: { tracing: { parent: 'span' as never } }, imports: [OrdersModule] }),
    ).rejects.toThrow(
      new SqsConfigurationError(
        "SqsModule: tracing.parent must be 'ambient' (the span current when a record runs) or 'producer' " +
          '(the context the message was sent in), got "span".',
      ),
    );
  });

  it("SqsModule's tracing.parent takes 'ambient' and 'producer'", async () => {
    for (const parent of ['ambient', 'producer'] as const) {
      const app = await createTestApp({ sqs: { tracing: { parent } }, imports: [OrdersModule] });
      expect((await app.sqs.send(orderCreated('t-1', 'o-1'))).status).toBe('OK');
      await app.close();
    }
  });

  it('the stores', () => {
    expect(() => new RedisIdempotencyStore('redis://127.0.0.1:1', { serverChek: 'off' } as never)).toThrow(
      /RedisIdempotencyStore options: unknown option "serverChek"; did you mean "serverCheck"\?/,
    );
    expect(() => new PostgresIdempotencyStore('postgres://127.0.0.1/x', { tabel: 'keys' } as never)).toThrow(
      /PostgresIdempotencyStore options: unknown option "tabel"; did you mean "table"\?/,
    );
    expect(
      () => new PostgresIdempotencyStore('postgres://127.0.0.1/x', { sweeper: { interval: 5 } } as never),
    ).toThrow(/sweeper: unknown option "interval"; did you mean "intervalMs"\?/);
    expect(() => new DynamoDbIdempotencyStore({ tableName: 't', partitionkey: 'pk' } as never)).toThrow(
      /DynamoDbIdempotencyStore options: unknown option "partitionkey"; did you mean "partitionKey"\?/,
    );
    expect(() => new InMemoryIdempotencyStore({ maxKey: 5 } as never)).toThrow(/did you mean "maxKeys"\?/);
  });
});

@SqsEvent('order_shipped')
class ShippingMetadata {
  @IsString() eventId!: string;
}

@SqsEvent('order_shipped')
class OrderShipped {
  @IsString() id!: string;
  @ValidateNested() @Type(() => ShippingMetadata) metadata!: ShippingMetadata;
  @IsInt() parcels!: number;
}

describe("a key path validation's whitelist strips from every event stops the app at start-up", () => {
  const sqs = { validation: { validatorOptions: { whitelist: true } } };
  const handlerOf = (keyPath: string) => {
    @Injectable()
    class Shipping {
      @SqsMessageHandler(OrderShipped)
      @Idempotent(keyPath)
      async onShipped(): Promise<void> {}
    }
    @Module({ providers: [Shipping] })
    class ShippingModule {}
    return ShippingModule;
  };

  it('refuses metadata.eventId on a class that declares no metadata, naming what it declares', async () => {
    await expect(createTestApp({ sqs, imports: [handlerWith('metadata.eventId')] })).rejects.toThrow(
      '@Idempotent() on Orders.onCreated: the key path "metadata.eventId" cannot exist on its event: OrderCreated ' +
        'declares no property "metadata"; it declares id, orderId, amount, and validation\'s whitelist strips what ' +
        'it does not declare. Every record would fail for want of a key.',
    );
  });

  it('follows a nested, validated class, and accepts what exists', async () => {
    await expect(createTestApp({ sqs, imports: [handlerOf('metadata.eventID')] })).rejects.toThrow(
      'ShippingMetadata (the type of "metadata") declares no property "eventID"; it declares eventId',
    );
    const app = await createTestApp({ sqs, imports: [handlerOf('metadata.eventId')] });
    const { status } = await app.sqs.send({
      type: 'order_shipped',
      id: 'x',
      metadata: { eventId: 'e-1' },
      parcels: 1,
    });
    expect(status).toBe('OK');
    await app.close();
  });

  it('refuses a module-level keyPath the same way, and warns about the default id a class lacks', async () => {
    await expect(
      createTestApp({ idempotency: { keyPath: 'orderID' }, sqs, imports: [OrdersModule] }),
    ).rejects.toThrow(
      'OrdersHandler.onOrderCreated: the key path "orderID" cannot exist on its event: OrderCreated declares no property "orderID"',
    );
    @SqsEvent('order_counted')
    class OrderCounted {
      @IsString() orderId!: string;
    }
    @Injectable()
    class Counting {
      @SqsMessageHandler(OrderCounted)
      @Idempotent()
      async onCounted(): Promise<void> {}
    }
    const app = await createTestApp({ providers: [Counting] });
    expect(
      app.logs.find(
        'warn',
        'reads its key from "id" (the default), and OrderCounted declares no property "id"',
      ),
    ).toHaveLength(1);
    await app.close();
  });
});

describe('a handler class left out of providers is named at start-up', () => {
  it('warns, naming the class, instead of failing its messages as having no handler', async () => {
    @SqsEvent('parcel_lost')
    class ParcelLost {
      @IsString() id!: string;
    }
    @Injectable()
    class LostParcels {
      @SqsMessageHandler(ParcelLost)
      async onLost(): Promise<void> {}
    }
    const app = await createTestApp({ imports: [OrdersModule] }); // LostParcels is in no module
    const lines = app.logs.lines.filter((line) => line.context === 'SqsHandlers');
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: expect.stringMatching(/\bLostParcels\b.*(has|have) @SqsMessageHandler\(\) methods but/),
      }),
    ]);
    expect(lines[0].message).not.toMatch(/\bOrdersHandler\b/);
    expect((await app.sqs.send(orderCreated('o1'))).status).toBe('OK');
    await app.close();
    expect(LostParcels).toBeDefined();
  });
});

describe('a queue without a name (plain JavaScript, or an unset variable) stops the app naming the queue', () => {
  const url = 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders';

  it('SqsModule.forRoot, forRootAsync and SqsServer: by its index and url, with the fix', async () => {
    // It failed with "TypeError: Cannot read properties of undefined (reading 'endsWith')" at start-up.
    expect(() => SqsModule.forRoot({ queues: [{ url } as never] })).toThrow(
      new SqsConfigurationError(
        `SqsModule.forRoot(): queues[0] (url "${url}") has no name: give each queue the name its handlers ` +
          "bind to, e.g. { name: 'orders', url }.",
      ),
    );
    expect(() => SqsModule.forRoot({ queues: [{ name: 'a', url: 'https://q/a' }, { name: '' }] })).toThrow(
      'SqsModule.forRoot(): queues[1] has no name (got string ""): give each queue the name its handlers bind to',
    );
    const { Test } = await import('@nestjs/testing');
    await expect(
      Test.createTestingModule({
        imports: [
          SqsModule.forRootAsync({ useFactory: () => ({ queues: [{ url }] as never }) }),
          OrdersModule,
        ],
      }).compile(),
    ).rejects.toThrow(`SqsModule options: queues[0] (url "${url}") has no name`);
    const { SqsServer } = await import('../lib/microservices');
    expect(() => new SqsServer({ queues: [{ url } as never] })).toThrow(
      `SqsServer options: queues[0] (url "${url}") has no name`,
    );
  });
});
