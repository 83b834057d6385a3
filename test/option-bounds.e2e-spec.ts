import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  Idempotent,
  IdempotencyConfigurationError,
  IdempotencyModule,
  IdempotencyModuleOptions,
  InMemoryIdempotencyStore,
  SqsMessageHandler,
  SqsModule,
} from '../lib';
import { IdempotencyCenterModule } from '../lib/center';
import { RedisIdempotencyStore } from '../lib/stores/redis';
import { SqsTestClient } from '../lib/testing';
import { OrderCreated, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { CapturingLogger } from './support/capturing-logger';
import { createTestApp } from './support/test-app';

/**
 * Options at the edges are checked at bootstrap, with a sentence saying the limit and why, instead
 * of failing later: `ttl: 1e19` used to pass, then every completion failed in Redis (PX out of
 * range) while records reported OK, so dedup was never recorded; `inProgressTtl: 7e9` overflowed
 * the heartbeat's timer.
 */
describe('option bounds', () => {
  const bootstrap = async (
    options: IdempotencyModuleOptions,
    providers: Array<new (...args: never[]) => unknown> = [],
  ) => {
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot(options), SqsModule.forRoot({}), OrdersModule],
      providers,
    })
      .setLogger(new CapturingLogger())
      .compile();
    await moduleRef.init();
    return moduleRef;
  };

  it('refuses a ttl no store can keep, saying the limit and what to use instead', async () => {
    await expect(bootstrap({ ttl: 1e19 })).rejects.toThrow(IdempotencyConfigurationError);
    await expect(bootstrap({ ttl: 1e19 })).rejects.toThrow(
      'ttl must be at most 9007199254740991 ms (about 285,421 years): beyond 2^53 - 1 a count of milliseconds ' +
        'is no longer a whole number a store can keep; use Infinity to remember keys forever. Got 10000000000000000000.',
    );
  });

  it("refuses an inProgressTtl past Node's timers, the heartbeat's clock", async () => {
    await expect(bootstrap({ inProgressTtl: 7e9, heartbeat: true })).rejects.toThrow(
      /inProgressTtl must be at most 2147483647 ms \(about 24\.8 days\): the lease is renewed on a Node timer/,
    );
    await expect(bootstrap({ inProgressTtl: 2 ** 31 })).rejects.toThrow(/at most 2147483647 ms/);
  });

  it('accepts the limits themselves, and ttl Infinity', async () => {
    for (const options of [
      { ttl: Number.MAX_SAFE_INTEGER },
      { ttl: Infinity },
      { inProgressTtl: 2 ** 31 - 1 },
    ]) {
      await (await bootstrap(options)).close();
    }
  });

  describe('a store with a limit of its own (maxTtlMs)', () => {
    const THIRTY_DAYS = 30 * 86_400_000;
    class MonthStore extends InMemoryIdempotencyStore {
      readonly maxTtlMs = THIRTY_DAYS;
    }

    it('refuses module options beyond it, naming the store', async () => {
      await expect(bootstrap({ store: new MonthStore(), ttl: 2 * THIRTY_DAYS })).rejects.toThrow(
        'ttl must be at most 2592000000 ms (about 30 days): the store MonthStore keeps TTLs up to 2592000000 ms (its maxTtlMs)',
      );
      await (await bootstrap({ store: new MonthStore(), ttl: Infinity })).close();
    });

    it('refuses an @Idempotent() option beyond it, naming the handler', async () => {
      @Injectable()
      class Archive {
        @SqsMessageHandler(OrderCreated)
        @Idempotent({ scope: 'archive', ttl: 2 * THIRTY_DAYS })
        async onOrderCreated(): Promise<void> {}
      }
      await expect(bootstrap({ store: new MonthStore() }, [Archive])).rejects.toThrow(
        /@Idempotent\(\) on Archive\.onOrderCreated: ttl must be at most 2592000000 ms .*the store MonthStore/,
      );
    });

    it('refuses a store that describes itself wrongly', async () => {
      const store = Object.assign(new InMemoryIdempotencyStore(), { maxTtlMs: -1 });
      await expect(bootstrap({ store })).rejects.toThrow(/maxTtlMs = -1; it must be a positive number/);
    });
  });

  it('keeps a completion on Redis with ttl at the limit: the duplicate is caught', async () => {
    const redis = new Redis(process.env.REDIS_URL!);
    const app = await createTestApp({
      idempotency: {
        store: new RedisIdempotencyStore(redis, { serverCheck: 'off' }),
        service: 'orders',
        keyPrefix: `bounds-${Date.now().toString(36)}`,
        ttl: Number.MAX_SAFE_INTEGER,
        inProgressTtl: 2 ** 31 - 1,
      },
      imports: [OrdersModule],
    });
    try {
      expect((await app.sqs.send(orderCreated('e1'))).status).toBe('OK');
      expect((await app.sqs.send(orderCreated('e1'))).status).toBe('DUPLICATE');
    } finally {
      await app.close();
      await redis.quit();
    }
  });
});

describe('a completion the store did not record', () => {
  /** Claims work; completions fail, as `PX 1e19` did. */
  class FailingCompletions extends InMemoryIdempotencyStore {
    override async markComplete(): Promise<boolean> {
      throw new Error('ERR value is not an integer or out of range');
    }
  }

  it('is counted as completions_lost (and a store error), in the Idempotency Center’s JSON', async () => {
    @Module({
      imports: [
        IdempotencyModule.forRoot({ store: new FailingCompletions() }),
        SqsModule.forRoot({}),
        OrdersModule,
        IdempotencyCenterModule.forRoot({ allowAnonymous: true }),
      ],
    })
    class CenterApp {}
    const moduleRef = await Test.createTestingModule({ imports: [CenterApp] })
      .setLogger(new CapturingLogger())
      .compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    try {
      const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      const sqs = new SqsTestClient(app);
      // The handler succeeded: the record is OK, but nothing protects the event from its duplicates.
      expect((await sqs.send(orderCreated('e1'))).status).toBe('OK');
      const json = (await (await fetch(`${base}/idempotency`)).json()) as {
        totals: Record<string, number>;
        storeWarnings: unknown[];
      };
      expect(json.totals).toMatchObject({ handled: 1, store_errors: 1, completions_lost: 1 });
      expect(json.storeWarnings).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
