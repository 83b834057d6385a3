import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { Test, TestingModule } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import { IdempotencyModule, IdempotencyModuleOptions, IdempotencyStore, SqsModule } from '../lib';
import { IdempotencyStats } from '../lib/center';
import { SqsTestClient } from '../lib/testing';
import {
  DynamoDbIdempotencyStore,
  DynamoDbIdempotencyStoreOptions,
  DynamoDbIdempotencyTableError,
} from '../lib/stores/dynamodb';
import { deferred, OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { CapturingLogger } from './support/capturing-logger';
import { countRequests, DynaliteServer, startDynalite } from './support/dynalite';
import { HttpFaultProxy } from './support/http-fault-proxy';
import { waitFor } from './support/wait-for';
import { expectInstancesShareClaims } from './support/shared-claims';

/**
 * The DynamoDB store in Nest apps (two apps = two instances of one service) over one dynalite
 * table: shared dedup, the fencing scenario of a lease that expires under a running handler, the
 * start-up check of the table, and throttling and timeouts reaching `onStoreError`.
 */
describe('DynamoDbIdempotencyStore in a Nest app', () => {
  let dynamo: DynaliteServer;
  let table: string;
  let keyPrefix: string;
  /** The log of every app a case starts (Nest's logger is process-wide: the last one set gets all lines). */
  let logs: CapturingLogger;
  const apps: TestingModule[] = [];
  const clients: DynamoDBClient[] = [];

  beforeAll(async () => {
    dynamo = await startDynalite();
    table = await dynamo.createTable();
  });
  afterAll(() => dynamo.stop());
  beforeEach(() => {
    keyPrefix = `app-${randomUUID()}`;
    logs = new CapturingLogger();
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    for (const client of clients.splice(0)) client.destroy();
  });

  const start = async (
    store: Partial<DynamoDbIdempotencyStoreOptions> = {},
    idempotency: Partial<IdempotencyModuleOptions> = {},
  ) => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        IdempotencyModule.forRoot({
          store: new DynamoDbIdempotencyStore({
            tableName: table,
            clientConfig: dynamo.clientConfig,
            ...store,
          }),
          keyPrefix,
          service: 'orders',
          stats: {},
          ...idempotency,
        }),
        SqsModule.forRoot({}),
        OrdersModule,
      ],
    })
      .setLogger(logs)
      .compile();
    await moduleRef.init();
    apps.push(moduleRef);
    return {
      moduleRef,
      sqs: new SqsTestClient(moduleRef, { remainingTimeMs: 60_000 }),
      ledger: moduleRef.get(OrdersLedger),
      store: moduleRef.get<DynamoDbIdempotencyStore>(IdempotencyStore),
    };
  };
  const itemOf = async (key: string) => {
    const client = dynamo.client();
    clients.push(client);
    const { Item } = await client.send(
      new GetItemCommand({ TableName: table, Key: { id: { S: key } }, ConsistentRead: true }),
    );
    return Item;
  };

  it('shares dedup state between two instances', async () => {
    const [a, b] = [await start(), await start()];
    await expectInstancesShareClaims(a, b);

    expect(await itemOf(`${keyPrefix}:orders:order_created:e1`)).toMatchObject({
      status: { S: 'COMPLETED' },
      expiresAtMs: { N: expect.any(String) },
    });
  });

  it('fencing: a lease expires under A, B takes over, A then fails: A’s release is refused and no third run happens', async () => {
    // Both instances read one clock, moved by the test: the lease expires without sleeping.
    const clock = { now: Date.now() };
    const options = { clock: () => clock.now };
    const [a, b] = [
      await start(options, { inProgressTtl: 10_000 }),
      await start(options, { inProgressTtl: 10_000 }),
    ];
    const key = `${keyPrefix}:orders:order_created:e1`;
    let failA!: (error: Error) => void;
    a.ledger.script.set('order-e1', new Promise<void>((_, reject) => (failA = reject)));
    const attemptA = a.sqs.send(orderCreated('e1'));
    await waitFor(() => a.ledger.calls === 1, 30_000, 'A in its handler');

    clock.now += 10_000; // A's lease ends while A still runs
    const holdB = deferred();
    b.ledger.script.set('order-e1', holdB.promise);
    const attemptB = b.sqs.send(orderCreated('e1'));
    await waitFor(() => b.ledger.calls === 1, 30_000, 'B in its handler (it took the expired lease over)');
    const tokenOfB = (await itemOf(key))?.token?.S;

    failA(new Error('A fails after the takeover'));
    const resultA = await attemptA;
    expect(resultA.status).toBe('FAILED');
    // A's release was refused: B's claim is intact, so A's redelivery meets it, in flight.
    expect(await itemOf(key)).toMatchObject({ status: { S: 'IN_PROGRESS' }, token: { S: tokenOfB } });
    const redelivered = await a.sqs.sendRecords([SqsTestClient.redelivery(resultA.record)]);
    expect(redelivered.statuses).toEqual(['IN_PROGRESS']);
    expect(logs.find('warn', `Lost the claim on "${key}" before`)).toHaveLength(1);
    expect((await a.moduleRef.get(IdempotencyStats).snapshot()).totals.leases_lost).toBe(1);

    holdB.resolve();
    expect((await attemptB).status).toBe('OK');
    const again = await a.sqs.sendRecords([SqsTestClient.redelivery(redelivered.records[0])]);
    expect(again.statuses).toEqual(['DUPLICATE']);
    // Two runs: A's (failed) and B's. A's redeliveries never ran the handler a third time.
    expect(a.ledger.calls + b.ledger.calls).toBe(2);
    expect(b.ledger.count('order-e1')).toBe(1);
    expect(await itemOf(key)).toMatchObject({ status: { S: 'COMPLETED' }, token: { S: tokenOfB } });
  });

  it('destroys the client it created when the app closes', async () => {
    const { moduleRef, sqs, store } = await start();
    await sqs.send(orderCreated('e1'));
    const client = store.client as DynamoDBClient;
    const destroy = jest.spyOn(client, 'destroy');
    await moduleRef.close();
    apps.splice(apps.indexOf(moduleRef), 1);
    expect(destroy).toHaveBeenCalledTimes(1);
  });

  describe('the table check: at start-up with checkTableOnStartup, else by the first call that fails', () => {
    const startFails = async (options: Partial<DynamoDbIdempotencyStoreOptions>) => {
      const error = await start({ checkTableOnStartup: true, ...options }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DynamoDbIdempotencyTableError);
      return (error as Error).message;
    };

    it('stops the start-up on a missing table, with the commands that create it', async () => {
      expect(await startFails({ tableName: 'no-such-table' })).toBe(
        'DynamoDbIdempotencyStore: table "no-such-table" does not exist (in the region and account the ' +
          'client uses). Create it: aws dynamodb create-table --table-name no-such-table ' +
          '--attribute-definitions AttributeName=id,AttributeType=S --key-schema AttributeName=id,KeyType=HASH ' +
          '--billing-mode PAY_PER_REQUEST && aws dynamodb update-time-to-live --table-name no-such-table ' +
          '--time-to-live-specification Enabled=true,AttributeName=expiresAt',
      );
    });

    it('stops the start-up on a table keyed otherwise, saying which option to set', async () => {
      const single = await dynamo.createTable({ partitionKey: 'pk', sortKey: 'sk' });
      expect(await startFails({ tableName: single })).toContain(
        `table "${single}" has partition key "pk" (S) and sort key "sk" (S); the store writes partition key ` +
          `"id" and no sort key, strings (S). Set partitionKey: 'pk'`,
      );
      expect(await startFails({ tableName: single, partitionKey: 'pk' })).toContain(
        "Set sortKey: { name: 'sk', value: 'idempotency' } (any fixed string)",
      );
      expect(await startFails({ tableName: table, sortKey: { name: 'sk', value: 'x' } })).toContain(
        "Remove sortKey from the store's options.",
      );
      const numeric = await dynamo.createTable({ partitionKeyType: 'N' });
      expect(await startFails({ tableName: numeric })).toContain(
        'has partition key "id" (N) and no sort key; the store writes partition key "id" and no sort key, ' +
          'strings (S). The store keeps string keys: use a table whose key attributes are of type S.',
      );
      // The matching options start.
      await start({
        tableName: single,
        partitionKey: 'pk',
        sortKey: { name: 'sk', value: 'idempotency' },
        checkTableOnStartup: true,
      });
    });

    it('warns when TTL is not on the expiry attribute (dynalite has no TTL), and starts', async () => {
      await start({ checkTableOnStartup: true });
      expect(
        logs.matching(
          'warn',
          /^TTL of table ".+" is disabled: expired idempotency items are never deleted .+ Turn it on: aws dynamodb update-time-to-live --table-name .+ --time-to-live-specification Enabled=true,AttributeName=expiresAt$/,
        ),
      ).toHaveLength(1);
    });

    it('is off by default: nothing is sent at start-up, and a missing table fails the first record saying what the check would', async () => {
      const client = dynamo.client();
      clients.push(client);
      const counts = countRequests(client);
      const { sqs } = await start({ client });
      expect(counts).toEqual({});
      await sqs.send(orderCreated('e1'));
      expect(counts).toEqual({ PutItem: 1, UpdateItem: 1 });

      const missing = await start({ tableName: 'no-such-table' });
      const { status, result } = await missing.sqs.send(orderCreated('e2'));
      expect(status).toBe('FAILED');
      expect(result.error?.name).toBe('IdempotencyStoreError');
      expect(result.error?.message).toContain(
        `tryAcquire("${keyPrefix}:orders:order_created:e2") failed: DynamoDbIdempotencyStore: table "no-such-table" ` +
          'does not exist (in the region and account the client uses). Create it: aws dynamodb create-table ' +
          '--table-name no-such-table',
      );
      expect(missing.ledger.calls).toBe(0);
    });

    it('starts with a warning when DynamoDB does not answer, and handles records once it does', async () => {
      const proxy = await HttpFaultProxy.start(dynamo.endpoint);
      try {
        proxy.mode = 'throttle';
        const { sqs, ledger } = await start({
          clientConfig: { ...dynamo.clientConfig, endpoint: proxy.url },
          checkTableOnStartup: true,
        });
        expect(
          logs.matching(
            'warn',
            /^Could not check table ".+" at start-up \(ProvisionedThroughputExceededException/,
          ),
        ).toHaveLength(1);
        expect((await sqs.send(orderCreated('e1'))).status).toBe('FAILED');
        proxy.mode = 'pass';
        expect((await sqs.send(orderCreated('e1'))).status).toBe('OK');
        expect(ledger.calls).toBe(1);
      } finally {
        await proxy.close();
      }
    });
  });

  describe('throttling and timeouts', () => {
    let proxy: HttpFaultProxy;
    beforeEach(async () => {
      proxy = await HttpFaultProxy.start(dynamo.endpoint);
    });
    afterEach(() => proxy.close());

    const startBehindProxy = (idempotency: Partial<IdempotencyModuleOptions> = {}, requestTimeout?: number) =>
      start(
        {
          clientConfig: {
            ...dynamo.clientConfig,
            endpoint: proxy.url,
            ...(requestTimeout ? { requestHandler: { requestTimeout } } : {}),
          },
        },
        idempotency,
      );

    it('fails a throttled claim closed after one retry (two requests): the handler does not run, the record is redelivered', async () => {
      const { sqs, ledger, moduleRef } = await startBehindProxy();
      proxy.mode = 'throttle';
      const { status, result } = await sqs.send(orderCreated('e1'));
      expect(status).toBe('FAILED');
      expect(result.error?.name).toBe('IdempotencyStoreError');
      expect(result.error?.message).toContain(
        `the idempotency store tryAcquire("${keyPrefix}:orders:order_created:e1") failed: The level of configured provisioned throughput`,
      );
      expect(proxy.received).toEqual({ PutItem: 2 });
      expect(ledger.calls).toBe(0);
      expect((await moduleRef.get(IdempotencyStats).snapshot()).totals.store_errors).toBe(1);

      proxy.mode = 'pass';
      expect((await sqs.send(orderCreated('e1'))).status).toBe('OK');
      expect(ledger.calls).toBe(1);
    });

    it("runs the handler without dedup on a throttled claim with onStoreError: 'process'", async () => {
      const { sqs, ledger } = await startBehindProxy({ onStoreError: 'process' });
      proxy.mode = 'throttle';
      expect((await sqs.send(orderCreated('e1'))).status).toBe('OK');
      expect(ledger.calls).toBe(1);
      expect(logs.find('error', `Store failed to claim "${keyPrefix}:orders:order_created:e1"`)).toHaveLength(
        1,
      );
    });

    it('fails a claim on a DynamoDB that stops answering within the request timeout, twice, not hanging the batch', async () => {
      const { sqs, ledger } = await startBehindProxy({}, 300);
      proxy.mode = 'hang';
      const started = Date.now();
      const { status, result } = await sqs.send(orderCreated('e1'));
      const elapsed = Date.now() - started;
      expect(status).toBe('FAILED');
      expect(result.error?.name).toBe('IdempotencyStoreError');
      expect(proxy.received).toEqual({ PutItem: 2 });
      // Two attempts of 300 ms and one back-off (at most 1 s): far below any lease.
      expect(elapsed).toBeGreaterThanOrEqual(600);
      expect(elapsed).toBeLessThan(10_000);
      expect(ledger.calls).toBe(0);
    });
  });
});
