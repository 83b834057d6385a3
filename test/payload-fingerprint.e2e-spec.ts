import { Injectable, Module, Type } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { IsInt, IsOptional, IsString } from 'class-validator';
import { Redis } from 'ioredis';
import type { Pool } from 'pg';
import { AcquireResult, FingerprintClaim } from '../lib/stores';
import {
  Idempotent,
  IdempotencyConfigurationError,
  IdempotencyFingerprintMismatchError,
  IdempotencyModule,
  IdempotencyModuleOptions,
  IdempotencyStore,
  IdempotencyStoreError,
  IdempotentOptions,
  InMemoryIdempotencyStore,
  SqsContext,
  SqsEvent,
  SqsMessageHandler,
  SqsModule,
} from '../lib';
import { IdempotencyCenterModule, IdempotencyStats } from '../lib/center';
import { RedisIdempotencyStore } from '../lib/stores/redis';
import { SqsTestClient } from '../lib/testing';
import { DynamoDbIdempotencyStore } from '../lib/stores/dynamodb';
import { createIdempotencyTable, PostgresIdempotencyStore } from '../lib/stores/postgres';
import { deferred } from './fixtures/orders.fixture';
import { CapturingLogger } from './support/capturing-logger';
import { DynaliteServer, startDynalite } from './support/dynalite';
import { createTestDatabase, TestDatabase } from './support/postgres-database';
import { PrerequisiteGate, requires } from './support/prerequisites';
import { RecordingStore } from './support/recording-store';
import { fauxqsClientConfig, waitFor } from './support/sqs-queues';
import { usePollingHarness } from './support/polling-harness';

/**
 * Payload fingerprints through real Nest apps: a second payload under a key already claimed (done,
 * or in flight) fails with `IdempotencyFingerprintMismatchError`, is never run nor acked, is counted
 * and logged, and reaches the DLQ; a copy of the same payload is still a duplicate. On every store,
 * through the Lambda host's pipeline (SqsTestClient), and polling fauxqs on Redis.
 */

@SqsEvent('payment_captured')
class PaymentCaptured {
  @IsString() id!: string;
  @IsString() paymentId!: string;
  @IsInt() amount!: number;
  /** Set anew by each producer retry: not part of what the payment says. */
  @IsOptional() @IsString() sentAt?: string;
}

/** What the payment handler did; a test holds a payment in flight through `holds`. */
@Injectable()
class PaymentsLedger {
  readonly entered: Array<{ paymentId: string; amount: number; messageId: string }> = [];
  readonly captured: Array<{ paymentId: string; amount: number }> = [];
  readonly holds = new Map<string, Promise<void>>();
}

/** The payments handler, fingerprinting what a payment says (not `sentAt`), or as `options` say. */
function paymentsModule(
  options: IdempotentOptions = { fingerprint: ['paymentId', 'amount'] },
): Type<unknown> {
  @Injectable()
  class Payments {
    constructor(private readonly ledger: PaymentsLedger) {}

    @SqsMessageHandler(PaymentCaptured)
    @Idempotent(options)
    async onCaptured(event: PaymentCaptured, ctx: SqsContext): Promise<void> {
      this.ledger.entered.push({
        paymentId: event.paymentId,
        amount: event.amount,
        messageId: ctx.messageId,
      });
      await this.ledger.holds.get(event.paymentId);
      this.ledger.captured.push({ paymentId: event.paymentId, amount: event.amount });
    }
  }
  @Module({ providers: [Payments, PaymentsLedger], exports: [PaymentsLedger] })
  class PaymentsModule {}
  return PaymentsModule;
}

const payment = (id: string, amount: number, sentAt = new Date().toISOString()) => ({
  type: 'payment_captured',
  id,
  paymentId: `pay-${id}`,
  amount,
  sentAt,
});

interface Running {
  moduleRef: TestingModule;
  sqs: SqsTestClient;
  ledger: PaymentsLedger;
  logs: CapturingLogger;
  counters(): Promise<Record<string, number>>;
}

async function start(
  idempotency: IdempotencyModuleOptions,
  handler = paymentsModule(),
  extra: Array<Type<unknown> | ReturnType<typeof SqsModule.forRoot>> = [],
): Promise<Running> {
  const logs = new CapturingLogger();
  const moduleRef = await Test.createTestingModule({
    imports: [
      IdempotencyModule.forRoot({ service: 'payments', stats: {}, ...idempotency }),
      SqsModule.forRoot({}),
      handler,
      ...extra,
    ],
  })
    .setLogger(logs)
    .compile();
  await moduleRef.init();
  return {
    moduleRef,
    logs,
    sqs: new SqsTestClient(moduleRef, { defaultQueue: 'payments' }),
    ledger: moduleRef.get(PaymentsLedger, { strict: false }),
    counters: async () => (await moduleRef.get(IdempotencyStats).snapshot()).totals,
  };
}

/** Each store the module ships, as a fresh instance per app, behind the gate of what it needs. */
interface StoreUnderTest {
  name: string;
  gate?: PrerequisiteGate;
  setUp?(): Promise<void>;
  tearDown?(): Promise<void>;
  create(): IdempotencyStore;
}

const runId = Date.now().toString(36);
let dynamo: DynaliteServer;
let dynamoTable: string;
let database: TestDatabase;
let pool: Pool;
const redisClients: Redis[] = [];

const STORES: StoreUnderTest[] = [
  { name: 'InMemoryIdempotencyStore', create: () => new InMemoryIdempotencyStore() },
  {
    name: 'RedisIdempotencyStore',
    gate: requires('redis-server'),
    tearDown: async () => void (await Promise.all(redisClients.splice(0).map((client) => client.quit()))),
    create: () => {
      // The private redis-server the Jest global setup started.
      const client = new Redis(process.env.REDIS_URL!);
      redisClients.push(client);
      return new RedisIdempotencyStore(client, { serverCheck: 'off' });
    },
  },
  {
    name: 'DynamoDbIdempotencyStore',
    setUp: async () => {
      dynamo = await startDynalite();
      dynamoTable = await dynamo.createTable();
    },
    tearDown: () => dynamo.stop(),
    create: () => new DynamoDbIdempotencyStore({ tableName: dynamoTable, clientConfig: dynamo.clientConfig }),
  },
  {
    name: 'PostgresIdempotencyStore',
    gate: requires('postgres'),
    setUp: async () => {
      database = await createTestDatabase('fingerprints');
      pool = database.pool();
      await createIdempotencyTable(pool);
    },
    tearDown: () => database.drop(),
    create: () => new PostgresIdempotencyStore(pool, { sweeper: false }),
  },
];

for (const storeUnderTest of STORES) {
  const gate = storeUnderTest.gate ?? { describe };
  gate.describe(`payload fingerprints on ${storeUnderTest.name}, through the Lambda pipeline`, () => {
    let running: Running;
    let prefix = 0;
    beforeAll(() => storeUnderTest.setUp?.());
    afterAll(() => storeUnderTest.tearDown?.());
    beforeEach(async () => {
      running = await start({ store: storeUnderTest.create(), keyPrefix: `fp-${runId}-${++prefix}` });
    });
    afterEach(() => running.moduleRef.close());

    it('acks copies of the same payload as duplicates, and fails another payload under the key, naming both messages', async () => {
      const { sqs, ledger } = running;
      const first = await sqs.send(payment('p1', 100));
      expect(first.status).toBe('OK');
      // A redelivery of the same message, and a producer retry (a new message id, a new sentAt): duplicates.
      expect((await sqs.sendRecords([SqsTestClient.redelivery(first.record)])).statuses).toEqual([
        'DUPLICATE',
      ]);
      expect((await sqs.send(payment('p1', 100, 'later'))).status).toBe('DUPLICATE');

      // The same key for another amount: not run, not acked.
      const other = await sqs.send(payment('p1', 999));
      expect(other.status).toBe('FAILED');
      expect(other.response.batchItemFailures).toEqual([{ itemIdentifier: other.record.messageId }]);
      const error = other.result.error as IdempotencyFingerprintMismatchError;
      expect(error).toBeInstanceOf(IdempotencyFingerprintMismatchError);
      expect(error).toMatchObject({
        key: expect.stringMatching(/:payment_captured:p1$/),
        messageId: other.record.messageId,
        claimedByMessageId: first.record.messageId,
        claimState: 'COMPLETED',
      });
      expect(error.message).toContain(first.record.messageId);
      expect(error.message).toContain(other.record.messageId);
      // Its redeliveries fail the same way, until the queue's redrive policy moves it to the DLQ.
      expect((await sqs.sendRecords([SqsTestClient.redelivery(other.record)])).statuses).toEqual(['FAILED']);

      expect(ledger.captured).toEqual([{ paymentId: 'pay-p1', amount: 100 }]);
      expect(ledger.entered).toHaveLength(1);
      expect(await running.counters()).toMatchObject({
        handled: 1,
        duplicates_completed: 2,
        fingerprint_mismatches: 2,
        failed: 2,
      });
    });

    it('compares with a claim in flight too: another payload is a mismatch, the same one an in-flight copy', async () => {
      const { sqs, ledger } = running;
      const hold = deferred();
      ledger.holds.set('pay-p2', hold.promise);
      const original = sqs.send(payment('p2', 100));
      await waitFor(() => ledger.entered.length === 1, 'the original in its handler');

      const copy = await sqs.send(payment('p2', 100, 'retry'));
      expect(copy.status).toBe('IN_PROGRESS');
      const other = await sqs.send(payment('p2', 5));
      expect(other.status).toBe('FAILED');
      expect(other.result.error).toBeInstanceOf(IdempotencyFingerprintMismatchError);
      expect(other.result.error).toMatchObject({
        claimState: 'IN_PROGRESS',
        claimedByMessageId: ledger.entered[0].messageId,
      });
      expect(other.result.error?.message).toMatch(/is being processed for message /);

      hold.resolve();
      expect((await original).status).toBe('OK');
      // After the original completed: the copy is a duplicate, the other payload still a mismatch.
      expect((await sqs.sendRecords([SqsTestClient.redelivery(copy.record)])).statuses).toEqual([
        'DUPLICATE',
      ]);
      expect((await sqs.sendRecords([SqsTestClient.redelivery(other.record)])).statuses).toEqual(['FAILED']);
      expect(ledger.captured).toEqual([{ paymentId: 'pay-p2', amount: 100 }]);
      expect(await running.counters()).toMatchObject({
        handled: 1,
        duplicates_in_flight: 1,
        duplicates_completed: 1,
        fingerprint_mismatches: 2,
      });
    });
  });
}

describe('payload fingerprint options', () => {
  const apps: Running[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.moduleRef.close()));
  });
  const launch = async (...args: Parameters<typeof start>) => {
    const app = await start(...args);
    apps.push(app);
    return app;
  };

  it('applies the module option to every handler; a handler turns it off with fingerprint: false', async () => {
    const everywhere = await launch({ fingerprint: true }, paymentsModule({}));
    await everywhere.sqs.send(payment('m1', 1, 'same'));
    // The whole event is hashed: even sentAt counts.
    expect((await everywhere.sqs.send(payment('m1', 1, 'same'))).status).toBe('DUPLICATE');
    expect((await everywhere.sqs.send(payment('m1', 1, 'other'))).status).toBe('FAILED');

    const optedOut = await launch({ fingerprint: true }, paymentsModule({ fingerprint: false }));
    await optedOut.sqs.send(payment('m2', 1));
    expect((await optedOut.sqs.send(payment('m2', 2))).status).toBe('DUPLICATE');
    expect(await optedOut.counters()).toMatchObject({ fingerprint_mismatches: 0 });
  });

  it('hashes what a function returns, given the payload as it arrived and its context', async () => {
    const app = await launch(
      {},
      paymentsModule({ fingerprint: (payload: { amount: number }) => ({ cents: payload.amount * 100 }) }),
    );
    await app.sqs.send(payment('f1', 3));
    expect((await app.sqs.send(payment('f1', 3, 'retry'))).status).toBe('DUPLICATE');
    expect((await app.sqs.send(payment('f1', 4))).status).toBe('FAILED');
    expect(app.ledger.captured).toEqual([{ paymentId: 'pay-f1', amount: 3 }]);
  });

  it('fails the record, naming the message and the handler, when the fingerprint cannot be computed', async () => {
    const app = await launch(
      {},
      paymentsModule({
        fingerprint: (event: PaymentCaptured) => {
          const cyclic: Record<string, unknown> = { id: event.id };
          cyclic.self = cyclic;
          return cyclic;
        },
      }),
    );
    const { status, result, record } = await app.sqs.send(payment('c1', 1));
    expect(status).toBe('FAILED');
    expect(result.error?.message).toContain(`message ${record.messageId} on queue "payments"`);
    expect(result.error?.message).toMatch(
      /payload fingerprint \(fingerprint\(\)\) for Payments\.onCaptured: .*circular/,
    );
    expect(app.ledger.entered).toEqual([]);
  });

  it('does not compare a key claimed before the option was on, and counts nothing then', async () => {
    const store = new InMemoryIdempotencyStore();
    const before = await launch({ store }, paymentsModule({}));
    await before.sqs.send(payment('b1', 1));
    const after = await launch({ store }, paymentsModule());
    expect((await after.sqs.send(payment('b1', 2))).status).toBe('DUPLICATE');
  });

  it.each([
    [
      'the module option',
      { fingerprint: true } as IdempotencyModuleOptions,
      {},
      /^IdempotencyModule options: /,
    ],
    [
      '@Idempotent()',
      {},
      { fingerprint: ['amount'] } as IdempotentOptions,
      /^@Idempotent\(\) on Payments\.onCaptured: /,
    ],
  ])(
    'refuses %s at bootstrap with a store that keeps no fingerprints',
    async (_, moduleOptions, handlerOptions, where) => {
      const error = await start(
        { store: new RecordingStore(), ...moduleOptions },
        paymentsModule(handlerOptions),
      ).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(IdempotencyConfigurationError);
      expect((error as Error).message).toMatch(where);
      expect((error as Error).message).toMatch(
        /fingerprint needs a store that keeps payload fingerprints \(keepsFingerprints: true\), and the store RecordingStore keeps none/,
      );
    },
  );

  it('shows the counter and each handler’s fingerprint in the Idempotency Center’s JSON, and logs the record', async () => {
    @Module({
      imports: [
        IdempotencyModule.forRoot({ service: 'payments' }),
        SqsModule.forRoot({}),
        paymentsModule(),
        IdempotencyCenterModule.forRoot({ allowAnonymous: true }),
      ],
    })
    class CenterApp {}
    const logs = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({ imports: [CenterApp] })
      .setLogger(logs)
      .compile();
    const app = moduleRef.createNestApplication({ logger: logs });
    await app.listen(0, '127.0.0.1');
    try {
      const sqs = new SqsTestClient(app, { defaultQueue: 'payments' });
      const first = await sqs.send(payment('j1', 1));
      const other = await sqs.send(payment('j1', 2));
      const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      const json = (await (await fetch(`${base}/idempotency`)).json()) as {
        totals: Record<string, number>;
        eventTypes: Array<{ eventType: string; handlers: Array<{ handler: string; fingerprint?: string }> }>;
      };
      expect(json.totals).toMatchObject({ handled: 1, failed: 1, fingerprint_mismatches: 1 });
      const [type] = json.eventTypes.filter((each) => each.eventType === 'payment_captured');
      expect(type.handlers).toEqual([
        expect.objectContaining({ handler: 'Payments.onCaptured', fingerprint: 'fields paymentId, amount' }),
      ]);
      const html = await (await fetch(`${base}/idempotency/ui`)).text();
      expect(html).toContain('<td data-total="fingerprint_mismatches">1</td>');
      // The record's one log line: FAILED at error level, with both message ids in its reason.
      const [line] = logs.matching(
        'error',
        new RegExp(`status=FAILED .*messageId=${other.record.messageId}`),
      );
      expect(line).toContain(`for message ${first.record.messageId}, whose payload has another fingerprint`);
    } finally {
      await app.close();
    }
  });
});

/** An in-memory store whose tryAcquire with a claim misbehaves as told. */
class HostileFingerprintStore extends InMemoryIdempotencyStore {
  constructor(private readonly answer: () => unknown) {
    super();
  }
  override tryAcquire(key: string, ttlMs: number, token: string, claim?: FingerprintClaim): Promise<never> {
    return (claim ? this.answer() : super.tryAcquire(key, ttlMs, token)) as never;
  }
}

describe('a store whose tryAcquire with a claim misbehaves', () => {
  it.each([
    [
      'throws',
      () => {
        throw new Error('exploded');
      },
      /failed: exploded\./,
    ],
    ['rejects', () => Promise.reject(new Error('down')), /failed: down\./],
    [
      'returns a plain value',
      () => ({ result: AcquireResult.ACQUIRED }),
      /returned the object .* instead of a promise/,
    ],
    ['answers another result', async () => ({ result: 'OK' }), /resolved to the object \{"result":"OK"\}/],
    ['answers an unknown bare result', async () => 'OK', /resolved to "OK", not an AcquireResult/],
    [
      'answers a number as fingerprint',
      async () => ({ result: AcquireResult.COMPLETED, fingerprint: 7 }),
      /"fingerprint":7/,
    ],
  ])(
    '%s: the record fails closed as a store error naming the call, and runs with onStoreError: process',
    async (_, answer, cause) => {
      const closed = await start({ store: new HostileFingerprintStore(answer) });
      const { status, result } = await closed.sqs.send(payment('h1', 1));
      await closed.moduleRef.close();
      expect(status).toBe('FAILED');
      expect(result.error).toBeInstanceOf(IdempotencyStoreError);
      expect(result.error?.message).toMatch(
        /idempotency store tryAcquire\(".*payment_captured:h1"\) failed: /,
      );
      expect(result.error?.message).toMatch(cause);
      expect(closed.ledger.entered).toEqual([]);

      const open = await start({ store: new HostileFingerprintStore(answer), onStoreError: 'process' });
      expect((await open.sqs.send(payment('h1', 1))).status).toBe('OK');
      expect(await open.counters()).toMatchObject({ store_errors: 1, keyless: 1, handled: 1 });
      await open.moduleRef.close();
    },
  );
});

const withRedis = requires('redis-server');

withRedis.describe('payload fingerprints polling fauxqs, on Redis', () => {
  const polling = usePollingHarness({ captureLogs: false });
  const { queues } = polling;

  it('sends the other payload to the DLQ after maxReceiveCount, runs the first once, and acks its copies', async () => {
    const queue = await queues.create('fingerprints', { visibilityTimeout: 1, maxReceiveCount: 2 });
    const client = new Redis(process.env.REDIS_URL!);
    // Quit after the app that uses it has closed (the harness closes latest first).
    await polling.start({ close: () => client.quit() });
    const moduleRef = await Test.createTestingModule({
      imports: [
        IdempotencyModule.forRoot({
          store: new RedisIdempotencyStore(client, { serverCheck: 'off' }),
          service: 'payments',
          keyPrefix: `fp-poll-${runId}`,
          stats: {},
        }),
        SqsModule.forRoot({
          waitTimeSeconds: 1,
          client: fauxqsClientConfig(),
          queues: [{ name: 'payments', url: queue.url }],
        }),
        paymentsModule(),
      ],
    })
      .setLogger(new CapturingLogger())
      .compile();
    await polling.start(moduleRef);
    await moduleRef.init();
    const ledger = moduleRef.get(PaymentsLedger, { strict: false });
    const stats = moduleRef.get(IdempotencyStats);

    await queues.send(queue.url, payment('q1', 100));
    await waitFor(() => ledger.captured.length === 1, 'the first payment captured', 30_000);
    const copyId = await queues.send(queue.url, payment('q1', 100, 'retry'));
    const otherId = await queues.send(queue.url, payment('q1', 250));

    await waitFor(
      async () => (await queues.depth(queue.dlqUrl!)) === 1,
      'the other payment in the DLQ',
      30_000,
    );
    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'the queue drained', 30_000);
    const [dead] = await queues.peek(queue.dlqUrl!);
    expect(dead.MessageId).toBe(otherId);
    expect(JSON.parse(dead.Body!)).toMatchObject({ id: 'q1', amount: 250 });
    expect(ledger.captured).toEqual([{ paymentId: 'pay-q1', amount: 100 }]);
    expect(copyId).not.toBe(otherId);
    // Received twice (maxReceiveCount 2), a mismatch each time; the copy was acked as a duplicate.
    expect((await stats.snapshot()).totals).toMatchObject({
      handled: 1,
      duplicates_completed: 1,
      fingerprint_mismatches: 2,
    });
  });
});
