import { Controller, Get, Injectable, Module, Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { IsString } from 'class-validator';
import { AcquireResult } from '../lib/stores';
import {
  Idempotent,
  IdempotencyModule,
  IdempotencyModuleOptions,
  IdempotencyStore,
  InjectIdempotencyStore,
  InMemoryIdempotencyStore,
  SqsEvent,
  SqsMessageHandler,
  SqsModule,
} from '../lib';
import { IdempotencyStats } from '../lib/center';
import { SqsTestClient } from '../lib/testing';
import { OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { RecordingStore } from './support/recording-store';
import { CapturingLogger } from './support/capturing-logger';
import { createTestApp } from './support/test-app';

async function bootstrap(imports: unknown[], providers: unknown[] = []) {
  const moduleRef = await Test.createTestingModule({
    imports: imports as never[],
    providers: providers as never[],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

describe('IdempotencyModule options are checked at bootstrap', () => {
  it.each<[string, IdempotencyModuleOptions, string]>([
    [
      'a store object missing methods, named by what it has',
      { store: { tryAcquire: async () => AcquireResult.ACQUIRED } as never },
      'the `store` option (an object literal with methods tryAcquire) lacks markComplete, forget',
    ],
    [
      'a store instance missing methods, named by its class',
      { store: new (class PgStore {})() as never },
      'the store PgStore lacks tryAcquire, markComplete, forget',
    ],
    ['ttl 0', { ttl: 0 }, 'ttl must be a positive number of milliseconds'],
    ['a negative ttl', { ttl: -5 }, 'ttl must be a positive number'],
    ['a NaN ttl', { ttl: NaN }, 'ttl must be a positive number'],
    ['an infinite lease', { inProgressTtl: Infinity }, 'inProgressTtl must be a positive, finite number'],
    ['an empty key path', { keyPath: '' }, 'a key path must be a non-empty string'],
    ['a key path with an empty segment', { keyPath: 'metadata..id' }, 'has an empty or padded segment'],
    ['a key path through __proto__', { keyPath: '__proto__.id' }, 'goes through "__proto__"'],
    ['a key path through constructor', { keyPath: 'a.constructor' }, 'goes through "constructor"'],
    ['both keyPath and key', { keyPath: 'id', key: () => 'k' }, 'either keyPath or key()'],
    ['an empty keyPrefix', { keyPrefix: '' }, 'keyPrefix must be a non-empty string'],
  ])('refuses %s with an error saying what to fix', async (_case, options, message) => {
    await expect(bootstrap([IdempotencyModule.forRoot(options), SqsModule.forRoot({})])).rejects.toThrow(
      message,
    );
  });

  it('refuses a bad @Idempotent() declaration naming the handler', async () => {
    class Evt {
      @IsString() id!: string;
    }
    @Injectable()
    class BadHandler {
      @SqsMessageHandler(Evt)
      @Idempotent({ ttl: -1 })
      async on(): Promise<void> {}
    }
    await expect(
      bootstrap([IdempotencyModule.forRoot({}), SqsModule.forRoot({})], [BadHandler]),
    ).rejects.toThrow('@Idempotent() on BadHandler.on: ttl must be a positive number');
  });

  it('accepts ttl: Infinity (remember keys forever)', async () => {
    const store = new RecordingStore();
    const app = await createTestApp({ idempotency: { store, ttl: Infinity }, imports: [OrdersModule] });
    await app.sqs.send(orderCreated('e1'));
    expect(store.calls[1]).toMatchObject({ method: 'markComplete', ttlMs: Infinity });
    await app.close();
  });

  it('uses an InMemoryIdempotencyStore by default and exposes the store token', async () => {
    const moduleRef = await bootstrap([IdempotencyModule.forRoot({}), SqsModule.forRoot({})]);
    expect(moduleRef.get(IdempotencyStore)).toBeInstanceOf(InMemoryIdempotencyStore);
    await moduleRef.close();
  });
});

@Injectable()
class StoreConfig {
  readonly clockStart = 5;
}

@Module({ providers: [StoreConfig], exports: [StoreConfig] })
class StoreConfigModule {}

/** A user's store class with its own injected dependency. */
@Injectable()
class UserStore extends InMemoryIdempotencyStore {
  constructor(readonly config: StoreConfig) {
    super();
  }
}

@Injectable()
class StoreConsumer {
  constructor(@InjectIdempotencyStore() readonly store: IdempotencyStore) {}
}

class OptionsFactory {
  createIdempotencyOptions(): IdempotencyModuleOptions {
    return { keyPrefix: 'from-class' };
  }
}

describe('IdempotencyModule wiring', () => {
  it('forRoot with a store class instantiates it with its own dependencies', async () => {
    const moduleRef = await bootstrap(
      [
        IdempotencyModule.forRoot({ store: UserStore, imports: [StoreConfigModule] }),
        SqsModule.forRoot({}),
        OrdersModule,
      ],
      [StoreConsumer],
    );
    const store = moduleRef.get(StoreConsumer).store;
    expect(store).toBeInstanceOf(UserStore);
    expect((store as UserStore).config.clockStart).toBe(5);
    expect((await new SqsTestClient(moduleRef).send(orderCreated('e1'))).status).toBe('OK');
    await moduleRef.close();
  });

  it('forRootAsync with useFactory, inject and imports', async () => {
    const recording = new RecordingStore();
    @Module({ providers: [{ provide: 'STORE', useValue: recording }], exports: ['STORE'] })
    class StoreModule {}
    const moduleRef = await bootstrap([
      IdempotencyModule.forRootAsync({
        imports: [StoreModule],
        inject: ['STORE'],
        useFactory: (store: RecordingStore) => ({ store, keyPrefix: 'svc' }),
      }),
      SqsModule.forRoot({}),
      OrdersModule,
    ]);
    await new SqsTestClient(moduleRef).send(orderCreated('e1'));
    expect(recording.calls[0].key).toBe('svc:order_created:e1');
    await moduleRef.close();
  });

  @Module({ providers: [OptionsFactory], exports: [OptionsFactory] })
  class FactoryModule {}

  it.each([
    ['useClass', IdempotencyModule.forRootAsync({ useClass: OptionsFactory })],
    [
      'useExisting',
      IdempotencyModule.forRootAsync({ imports: [FactoryModule], useExisting: OptionsFactory }),
    ],
  ])('forRootAsync with %s', async (_, idempotencyModule) => {
    const moduleRef = await bootstrap([idempotencyModule, SqsModule.forRoot({}), OrdersModule]);
    const store = moduleRef.get<InMemoryIdempotencyStore>(IdempotencyStore);
    await new SqsTestClient(moduleRef).send(orderCreated('e1'));
    expect(await store.tryAcquire('from-class:order_created:e1', 1000, 't')).toBe(AcquireResult.COMPLETED);
    await moduleRef.close();
  });

  it('forRootAsync with a store class from the factory', async () => {
    const moduleRef = await bootstrap(
      [
        IdempotencyModule.forRootAsync({
          imports: [StoreConfigModule],
          useFactory: () => ({ store: UserStore }),
        }),
        SqsModule.forRoot({}),
      ],
      [StoreConsumer],
    );
    expect(moduleRef.get(StoreConsumer).store).toBeInstanceOf(UserStore);
    await moduleRef.close();
  });

  it('is global by default: @Idempotent() handlers in modules that do not import it work', async () => {
    const moduleRef = await bootstrap([IdempotencyModule.forRoot({}), SqsModule.forRoot({}), OrdersModule]);
    const sqs = new SqsTestClient(moduleRef);
    expect((await sqs.send(orderCreated('e1'))).status).toBe('OK');
    expect((await sqs.send(orderCreated('e1'))).status).toBe('DUPLICATE');
    await moduleRef.close();
  });

  it('with isGlobal: false, a handler module that does not import it fails with a clear message', async () => {
    await expect(
      bootstrap([IdempotencyModule.forRoot({ isGlobal: false }), SqsModule.forRoot({}), OrdersModule]),
    ).rejects.toThrow(
      '@Idempotent() needs IdempotencyModule: add IdempotencyModule.forRoot({ ... }) to the imports of your root ' +
        'module (it is global by default), or import it into the module of this handler when isGlobal is false.',
    );
  });

  it('isGlobal: false works when imported into the handler module', async () => {
    @Module({
      imports: [IdempotencyModule.forRoot({ isGlobal: false })],
      providers: [...providersOf(OrdersModule)],
    })
    class LocalOrders {}
    const moduleRef = await bootstrap([SqsModule.forRoot({}), LocalOrders]);
    const sqs = new SqsTestClient(moduleRef);
    expect((await sqs.send(orderCreated('e1'))).status).toBe('OK');
    expect((await sqs.send(orderCreated('e1'))).status).toBe('DUPLICATE');
    await moduleRef.close();
  });

  it('@InjectIdempotencyStore() injects the configured store', async () => {
    const store = new InMemoryIdempotencyStore();
    const moduleRef = await bootstrap([IdempotencyModule.forRoot({ store })], [StoreConsumer]);
    expect(moduleRef.get(StoreConsumer).store).toBe(store);
    await moduleRef.close();
  });
});

function providersOf(module: Function): Provider[] {
  return Reflect.getMetadata('providers', module) as Provider[];
}

describe('@Idempotent() declarations', () => {
  @SqsEvent('payment_captured')
  class PaymentCaptured {
    @IsString() id!: string;
  }

  it('refuses two idempotent handlers of one event type in one scope, naming both', async () => {
    @Injectable()
    class Billing {
      @SqsMessageHandler(PaymentCaptured)
      @Idempotent()
      async bill(): Promise<void> {}
    }
    @Injectable()
    class Receipts {
      @SqsMessageHandler(PaymentCaptured)
      @Idempotent()
      async send(): Promise<void> {}
    }
    await expect(
      bootstrap([IdempotencyModule.forRoot({}), SqsModule.forRoot({})], [Billing, Receipts]),
    ).rejects.toThrow(
      'Billing.bill and Receipts.send are both @Idempotent() handlers of "payment_captured" in one dedup scope ' +
        '"payment_captured": the second would skip every event whose key the first completed. Give each a distinct scope, ' +
        // Named after their methods, which tell them apart.
        "e.g. @Idempotent({ scope: 'payment_captured.bill' }) on Billing.bill and " +
        "@Idempotent({ scope: 'payment_captured.send' }) on Receipts.send.",
    );
  });

  it('names both event types when two handlers of different types share a scope', async () => {
    @SqsEvent('refund_issued')
    class RefundIssued {
      @IsString() id!: string;
    }
    @Injectable()
    class Ledger {
      @SqsMessageHandler(PaymentCaptured)
      @Idempotent({ scope: 'ledger' })
      async onPayment(): Promise<void> {}

      @SqsMessageHandler(RefundIssued)
      @Idempotent({ scope: 'ledger' })
      async onRefund(): Promise<void> {}
    }
    await expect(bootstrap([IdempotencyModule.forRoot({}), SqsModule.forRoot({})], [Ledger])).rejects.toThrow(
      'Ledger.onPayment and Ledger.onRefund are both @Idempotent() handlers, of "payment_captured" and of ' +
        '"refund_issued", in one dedup scope "ledger": the second would skip every event whose key the first completed.',
    );
  });

  it('suggests a distinct scope for each of two handlers whose methods share a name', async () => {
    @Injectable()
    class Billing {
      @SqsMessageHandler(PaymentCaptured)
      @Idempotent()
      async handle(): Promise<void> {}
    }
    @Injectable()
    class Receipts {
      @SqsMessageHandler(PaymentCaptured)
      @Idempotent()
      async handle(): Promise<void> {}
    }
    const failure = bootstrap([IdempotencyModule.forRoot({}), SqsModule.forRoot({})], [Billing, Receipts]);
    await expect(failure).rejects.toThrow(
      "@Idempotent({ scope: 'payment_captured.billing' }) on Billing.handle and " +
        "@Idempotent({ scope: 'payment_captured.receipts' }) on Receipts.handle",
    );
  });

  it('refuses two handlers in one scope even when their class and method names match', async () => {
    const handlerClass = () => {
      @Injectable()
      class Handler {
        @SqsMessageHandler(PaymentCaptured)
        @Idempotent()
        async handle(): Promise<void> {}
      }
      return Handler;
    };
    await expect(
      bootstrap([IdempotencyModule.forRoot({}), SqsModule.forRoot({})], [handlerClass(), handlerClass()]),
    ).rejects.toThrow(/payment_captured\.first.*payment_captured\.second/);
  });

  it('with distinct scopes both run, each with its own claim and its own dedup', async () => {
    const runs: string[] = [];
    @Injectable()
    class Billing {
      @SqsMessageHandler(PaymentCaptured)
      @Idempotent({ scope: 'billing' })
      async bill(): Promise<void> {
        runs.push('bill');
      }
    }
    @Injectable()
    class Receipts {
      failNext = true;
      @SqsMessageHandler(PaymentCaptured)
      @Idempotent({ scope: 'receipts' })
      async send(): Promise<void> {
        if (this.failNext) {
          this.failNext = false;
          throw new Error('mail server down');
        }
        runs.push('send');
      }
    }
    const store = new RecordingStore();
    const app = await createTestApp({ idempotency: { store }, providers: [Billing, Receipts] });
    const first = await app.sqs.send({ id: 'p1' });
    expect(first.status).toBe('FAILED');
    const retry = await app.sqs.sendRecords([SqsTestClient.redelivery(first.record)]);
    expect(retry.statuses).toEqual(['OK']);
    expect(runs).toEqual(['bill', 'send']); // billing completed once; the retry only re-ran receipts
    expect(new Set(store.calls.map((call) => call.key))).toEqual(
      new Set(['idempotency:billing:p1', 'idempotency:receipts:p1']),
    );
    await app.close();
  });

  it('on a class covers every message handler of the class; method options override', async () => {
    @SqsEvent('a_happened')
    class AHappened {
      @IsString() id!: string;
      @IsString() ref!: string;
    }
    @SqsEvent('b_happened')
    class BHappened {
      @IsString() id!: string;
      @IsString() ref!: string;
    }
    @Injectable()
    @Idempotent({ ttl: 1234 })
    class Both {
      @SqsMessageHandler(AHappened)
      async onA(): Promise<void> {}

      @SqsMessageHandler(BHappened)
      @Idempotent({ keyPath: 'ref' })
      async onB(): Promise<void> {}
    }
    const store = new RecordingStore();
    const app = await createTestApp({ idempotency: { store }, providers: [Both] });
    await app.sqs.send({ type: 'a_happened', id: 'a1', ref: 'r1' });
    await app.sqs.send({ type: 'b_happened', id: 'b1', ref: 'r2' });
    // One claim per message, though the class-level and method-level decorators both apply to onB.
    const completions = (call: { method: string; ttlMs?: number }) =>
      call.method === 'markComplete' ? call.ttlMs : '-';
    expect(store.calls.map((call) => [call.method, call.key, completions(call)])).toEqual([
      ['tryAcquire', 'idempotency:a_happened:a1', '-'],
      ['markComplete', 'idempotency:a_happened:a1', 1234],
      ['tryAcquire', 'idempotency:b_happened:r2', '-'],
      ['markComplete', 'idempotency:b_happened:r2', 86_400_000],
    ]);
    await app.close();
  });

  describe('on subclasses that inherit one handler', () => {
    /** One handler method, inherited: each subclass is a handler of its own (a provider of its own). */
    const runs: string[] = [];
    class PaymentHandler {
      @SqsMessageHandler(PaymentCaptured)
      async handle(): Promise<void> {
        runs.push(this.constructor.name);
      }
    }
    beforeEach(() => (runs.length = 0));

    it.each([false, true])(
      'gives each subclass its class-level options (Nest pipeline: %s)',
      async (nestPipeline) => {
        @Injectable()
        @Idempotent({ scope: 'billing', ttl: 1111 })
        class Billing extends PaymentHandler {}
        @Injectable()
        @Idempotent({ scope: 'receipts', ttl: 2222 })
        class Receipts extends PaymentHandler {}
        const store = new RecordingStore();
        const app = await createTestApp({
          idempotency: { store, stats: {} },
          providers: [Billing, Receipts],
          nestPipeline,
        });
        expect((await app.sqs.send({ id: 'p1' })).status).toBe('OK');
        expect(runs).toEqual(['Billing', 'Receipts']);
        const completions = store.calls.filter((call) => call.method === 'markComplete');
        expect(completions.map((call) => [call.key, call.ttlMs])).toEqual([
          ['idempotency:billing:p1', 1111],
          ['idempotency:receipts:p1', 2222],
        ]);
        // Each is counted under its own name.
        const [eventType] = (await app.get(IdempotencyStats).snapshot()).eventTypes;
        expect(eventType.handlers.map((handler) => handler.handler)).toEqual([
          'Billing.handle',
          'Receipts.handle',
        ]);
        await app.close();
      },
    );

    it('refuses two subclasses in one scope, naming both', async () => {
      @Injectable()
      @Idempotent()
      class Billing extends PaymentHandler {}
      @Injectable()
      @Idempotent()
      class Receipts extends PaymentHandler {}
      await expect(
        bootstrap([IdempotencyModule.forRoot({}), SqsModule.forRoot({})], [Billing, Receipts]),
      ).rejects.toThrow(
        'Billing.handle and Receipts.handle are both @Idempotent() handlers of "payment_captured" in one dedup ' +
          'scope "payment_captured"',
      );
    });

    it('applies a base class’s class-level @Idempotent() to a subclass without its own', async () => {
      @Idempotent({ ttl: 4444 })
      class IdempotentPaymentHandler extends PaymentHandler {}
      @Injectable()
      class Billing extends IdempotentPaymentHandler {}
      const store = new RecordingStore();
      const app = await createTestApp({ idempotency: { store }, providers: [Billing] });
      expect((await app.sqs.send({ id: 'p1' })).status).toBe('OK');
      expect((await app.sqs.send({ id: 'p1' })).status).toBe('DUPLICATE');
      const completions = store.calls.filter((call) => call.method === 'markComplete');
      expect(completions.map((call) => [call.key, call.ttlMs])).toEqual([
        ['idempotency:payment_captured:p1', 4444],
      ]);
      await app.close();
    });

    it('lets the method’s own @Idempotent() win over a subclass’s, as on one class', async () => {
      class DecoratedPaymentHandler {
        @SqsMessageHandler(PaymentCaptured)
        @Idempotent({ ttl: 3333 })
        async handle(): Promise<void> {
          runs.push(this.constructor.name);
        }
      }
      @Injectable()
      @Idempotent({ scope: 'billing', ttl: 1111 })
      class Billing extends DecoratedPaymentHandler {}
      const store = new RecordingStore();
      const app = await createTestApp({ idempotency: { store }, providers: [Billing] });
      expect((await app.sqs.send({ id: 'p1' })).status).toBe('OK');
      expect(runs).toEqual(['Billing']);
      // The method's options, whole: its event type's scope and its ttl, none of the class's.
      const completions = store.calls.filter((call) => call.method === 'markComplete');
      expect(completions.map((call) => [call.key, call.ttlMs])).toEqual([
        ['idempotency:payment_captured:p1', 3333],
      ]);
      await app.close();
    });
  });

  it('a key function may return a string, a number or a bigint (its decimal digits)', async () => {
    @SqsEvent('sequenced')
    class Sequenced {
      @IsString() seq!: string;
    }
    @Injectable()
    class SequencedHandler {
      @SqsMessageHandler(Sequenced)
      @Idempotent({ key: (event: Sequenced) => BigInt(event.seq) })
      async on(): Promise<void> {}
    }
    const store = new RecordingStore();
    const app = await createTestApp({ idempotency: { store }, providers: [SequencedHandler] });
    expect((await app.sqs.send({ seq: '12345678901234567890' })).status).toBe('OK');
    expect((await app.sqs.send({ seq: '12345678901234567890' })).status).toBe('DUPLICATE');
    expect(store.calls[0].key).toBe('idempotency:sequenced:12345678901234567890');
    await app.close();
  });

  it('a key function receives the event and the SqsContext', async () => {
    @SqsEvent('keyed')
    class Keyed {
      @IsString() a!: string;
      @IsString() b!: string;
    }
    @Injectable()
    class KeyedHandler {
      @SqsMessageHandler(Keyed)
      @Idempotent({ key: (event: Keyed, ctx: { queue: string }) => `${ctx.queue}/${event.a}/${event.b}` })
      async on(): Promise<void> {}
    }
    const store = new RecordingStore();
    const app = await createTestApp({ idempotency: { store }, providers: [KeyedHandler] });
    await app.sqs.send({ a: 'x', b: 'y' }, { queue: 'orders' });
    expect(store.calls[0].key).toBe('idempotency:keyed:orders/x/y');
    await app.close();
  });
});

describe('@Idempotent() outside message handlers', () => {
  @Controller('orders')
  class OrdersController {
    calls = 0;
    @Get()
    @Idempotent()
    list(): { calls: number } {
      return { calls: ++this.calls };
    }
  }

  it('runs an HTTP route as it is, every call, and says once that it ignores it there', async () => {
    const logs = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({})],
      controllers: [OrdersController],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: logs });
    await app.listen(0, '127.0.0.1');
    try {
      const url = `${await app.getUrl()}/orders`;
      expect(await (await fetch(url)).json()).toEqual({ calls: 1 });
      expect(await (await fetch(url)).json()).toEqual({ calls: 2 });
      const warnings = logs.lines.filter((line) => line.level === 'warn' && line.context === 'Idempotency');
      // Once at bootstrap for the handler, once at its first call for the context type: not per call.
      expect(warnings.map((line) => line.message)).toEqual([
        '@Idempotent() on OrdersController.list has no effect: it is not an @SqsMessageHandler() or @EventPattern() handler.',
        "@Idempotent() only applies to message handlers (SQS, microservice events); ignored in a 'http' context.",
      ]);
    } finally {
      await app.close();
    }
  });
});

describe('ledger sanity', () => {
  it('the orders fixture counts shipments', async () => {
    const app = await createTestApp({ imports: [OrdersModule] });
    await app.sqs.send(orderCreated('e1'));
    expect(app.get(OrdersLedger).count('order-e1')).toBe(1);
    await app.close();
  });
});
