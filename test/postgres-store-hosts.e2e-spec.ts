import { Injectable, Module } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { IsString } from 'class-validator';
import type { Pool } from 'pg';
import { Idempotent, IdempotencyModule, IdempotencyStore, SqsEvent, SqsMessageHandler } from '../lib';
import { IdempotencyStats } from '../lib/center';
import { buildLambdaContext, buildSqsEvent, buildSqsRecord } from '../lib/testing';
import { createIdempotencyTable, PostgresIdempotencyStore } from '../lib/stores/postgres';
import { deferred, OrdersLedger, OrdersModule, orderCreated as order } from './fixtures/orders.fixture';
import { orderCreated, ShippingLog, startShippingApp } from './fixtures/shipping.fixture';
import { createTestDatabase, TestDatabase } from './support/postgres-database';
import { requires } from './support/prerequisites';
import { waitFor } from './support/sqs-queues';
import { createTestApp, TestApp } from './support/test-app';
import { usePollingHarness } from './support/polling-harness';
import { useLambdaSandboxes } from './support/lambda-sandboxes';

/**
 * PostgresIdempotencyStore behind the library's hosts, each in real Nest apps sharing one database:
 * the fencing scenario end to end, Lambda sandboxes (createSqsLambdaHandler) deduplicating each
 * other's records, and polling instances on fauxqs (SqsModule over sqs-consumer) each running an
 * event once between them.
 */
const postgres = requires('postgres');

postgres.describe('PostgresIdempotencyStore behind the hosts', () => {
  let db: TestDatabase;
  let pool: Pool;
  beforeAll(async () => {
    db = await createTestDatabase('hosts');
    pool = db.pool({ max: 4 });
    await createIdempotencyTable(pool);
  });
  afterAll(() => db?.drop());

  /** The row of the event `id`, as the database holds it. */
  const rowOf = async (id: string) =>
    (
      await pool.query<{ token: string; completed: boolean; expired: boolean }>(
        `SELECT token, completed, expires_at <= statement_timestamp() AS expired
           FROM idempotency_keys WHERE key LIKE '%:' || $1`,
        [id],
      )
    ).rows[0];

  describe('fencing, through a Nest app', () => {
    let app: TestApp;
    afterEach(() => app?.close());

    it('refuses a worker whose lease expired the next owner’s key, logs and counts the lost claim', async () => {
      const store = new PostgresIdempotencyStore(pool, { sweeper: false });
      app = await createTestApp({
        idempotency: {
          store,
          service: 'orders',
          keyPrefix: `fencing-${Date.now()}`,
          inProgressTtl: 300,
          stats: {},
        },
        imports: [OrdersModule],
      });
      const ledger = app.get(OrdersLedger);

      const slowA = deferred();
      ledger.script.set('order-f1', slowA.promise);
      const attemptA = app.sqs.send(order('f1'));
      await waitFor(() => ledger.calls === 1, 'attempt A in its handler');
      const tokenA = (await rowOf('f1')).token;
      // A's lease passes, by the database's clock, while A still runs.
      await waitFor(async () => (await rowOf('f1')).expired, 'the lease of attempt A to expire', 30_000);

      const slowB = deferred();
      ledger.script.set('order-f1', slowB.promise);
      const attemptB = app.sqs.send(order('f1'));
      await waitFor(() => ledger.calls === 2, 'attempt B in its handler');
      const tokenB = (await rowOf('f1')).token;
      expect(tokenB).not.toBe(tokenA);

      slowA.resolve();
      expect((await attemptA).status).toBe('OK');
      // A's completion was refused: B still owns the key, and the loss is logged and counted.
      expect(await rowOf('f1')).toMatchObject({ token: tokenB, completed: false });
      expect(
        app.logs.matching('warn', /Lost the claim on ".*:f1" before OrdersHandler.onOrderCreated completed/),
      ).toHaveLength(1);
      expect((await app.get(IdempotencyStats).snapshot()).totals.leases_lost).toBe(1);

      slowB.resolve();
      expect((await attemptB).status).toBe('OK');
      expect(await rowOf('f1')).toMatchObject({ token: tokenB, completed: true });
      expect((await app.sqs.send(order('f1'))).status).toBe('DUPLICATE');
    });
  });

  describe('the Lambda host', () => {
    @SqsEvent('invoice_issued')
    class InvoiceIssued {
      @IsString() id!: string;
      @IsString() invoice!: string;
    }

    const issued: string[] = [];
    @Injectable()
    class Invoices {
      @SqsMessageHandler(InvoiceIssued)
      @Idempotent()
      async onIssued(event: InvoiceIssued): Promise<void> {
        if (event.invoice === 'bad') throw new Error('cannot issue');
        issued.push(event.invoice);
      }
    }

    // What a Lambda function's module looks like: its store made from the environment, per sandbox.
    @Module({
      imports: [
        IdempotencyModule.forRootAsync({
          useFactory: () => ({
            store: new PostgresIdempotencyStore(process.env.INVOICES_DATABASE_URL!),
            service: 'invoices',
            stats: {},
          }),
        }),
      ],
      providers: [Invoices],
    })
    class InvoicesFunction {}

    const { sandbox, closeAll } = useLambdaSandboxes(() => InvoicesFunction);

    it('deduplicates across sandboxes: each event issued once, a failure retried by the next sandbox', async () => {
      process.env.INVOICES_DATABASE_URL = db.url;
      const [one, two] = [sandbox(), sandbox()];
      const invoice = (id: string, name = `inv-${id}`) =>
        buildSqsRecord({ type: 'invoice_issued', id, invoice: name }, { queue: 'invoices' });

      const first = [invoice('l1'), invoice('l2', 'bad')];
      const firstResponse = await one(buildSqsEvent(first), buildLambdaContext());
      // l2 failed, and its claim was released for the retry.
      expect(firstResponse).toEqual({ batchItemFailures: [{ itemIdentifier: first[1].messageId }] });

      // The other sandbox gets a copy of l1 (acked as a duplicate, not run) and l2's retry (run).
      const retries = [invoice('l1'), invoice('l2')];
      expect(await two(buildSqsEvent(retries), buildLambdaContext())).toEqual({ batchItemFailures: [] });
      expect(issued.sort()).toEqual(['inv-l1', 'inv-l2']);
      expect(await rowOf('l2')).toMatchObject({ completed: true });

      // Each sandbox created its own pool, and closing the sandbox ends it.
      const stores = await Promise.all(
        [one, two].map(async (sandbox) =>
          (await sandbox.getApp()).get<PostgresIdempotencyStore>(IdempotencyStore, { strict: false }),
        ),
      );
      expect(stores.every((store) => store instanceof PostgresIdempotencyStore)).toBe(true);
      const pools = stores.map((store) => store.pool as Pool);
      await closeAll();
      expect(pools.map((pool) => pool.ended)).toEqual([true, true]);
      expect(stores.map((store) => store.pool)).toEqual([undefined, undefined]); // closed for good
    });
  });

  describe('the polling host, on fauxqs', () => {
    const polling = usePollingHarness();
    const { queues } = polling;

    it('runs each event once across two instances, through producer retries and an in-flight duplicate', async () => {
      const queue = await queues.create('pg-polling', { visibilityTimeout: 1 });
      const apps: TestingModule[] = [];
      for (let i = 0; i < 2; i++) {
        const store = new PostgresIdempotencyStore(db.url);
        apps.push(
          await polling.start(
            startShippingApp({ store, queues: [{ name: 'orders', url: queue.url }], visibilityTimeout: 1 }),
          ),
        );
      }
      const logs = apps.map((app) => app.get(ShippingLog));
      const shipments = (orderId: string) => logs.reduce((sum, log) => sum + log.shipments(orderId), 0);
      const calls = () => logs.reduce((sum, log) => sum + log.calls.length, 0);

      // p2 is held in its handler while its copies arrive: they meet IN_PROGRESS and come back.
      const hold = deferred();
      for (const log of logs) log.holds.set('order-p2', hold.promise);
      await queues.sendBatch(queue.url, [orderCreated('p1'), orderCreated('p2'), orderCreated('p2')]);
      await queues.sendBatch(queue.url, [orderCreated('p1'), orderCreated('p2')]);
      const inFlightDuplicates = async () => {
        const snapshots = await Promise.all(apps.map((app) => app.get(IdempotencyStats).snapshot()));
        return snapshots.reduce((sum, snapshot) => sum + snapshot.totals.duplicates_in_flight, 0);
      };
      await waitFor(
        async () => shipments('order-p1') === 1 && (await inFlightDuplicates()) >= 1,
        'p1 shipped, and a copy of p2 refused while p2 is held',
      );
      hold.resolve();
      await waitFor(
        async () => (await queues.depth(queue.url)) === 0 && shipments('order-p2') === 1,
        'every copy acked',
        30_000,
      );

      expect(shipments('order-p1')).toBe(1);
      expect(shipments('order-p2')).toBe(1);
      expect(calls()).toBe(2); // the duplicates never reached a handler
      expect(await rowOf('p1')).toMatchObject({ completed: true });
      expect(await rowOf('p2')).toMatchObject({ completed: true });
    });
  });
});
