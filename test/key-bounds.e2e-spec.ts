import { Injectable, Module } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Idempotent, IdempotencyConfigurationError, SqsMessageHandler } from '../lib';
import { DynamoDbIdempotencyStore } from '../lib/stores/dynamodb';
import { createIdempotencyTable, PostgresIdempotencyStore } from '../lib/stores/postgres';
import { OrderCreated, OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { DynaliteServer, startDynalite } from './support/dynalite';
import { createTestDatabase, TestDatabase } from './support/postgres-database';
import { requires } from './support/prerequisites';
import { createTestApp, TestApp } from './support/test-app';

/**
 * Names nothing bounded (#37): a `service`, `scope` or `keyPrefix` of 3 KB, or holding NUL, started
 * fine on Postgres (over about 2 KB on DynamoDB), then every record failed on its key and went to
 * the dead-letter queue. Now the app does not start, and says the limit and the option to shorten;
 * a name that fits to the byte starts, and the store takes its longest key. The limits themselves are
 * checked against the real backends: one byte more is refused by the database.
 */

/** `bytes` of incompressible ASCII (a Postgres index row may compress a repetitive one). */
const randomName = (bytes: number) => randomBytes(bytes).toString('base64url').slice(0, bytes);
/** The store key's part before the service and after it, for `idempotency:<service>:order_created:<key>`. */
const FIXED_BYTES = 'idempotency:'.length + ':order_created:'.length;
/** A key of 200 colons: 600 bytes once escaped, the longest a key takes. */
const LONGEST_KEY = ':'.repeat(200);

const launch = (store: object, service: string) =>
  createTestApp({ idempotency: { store: store as never, service }, imports: [OrdersModule] });

requires('postgres').describe('key bounds on Postgres (maxKeyBytes 2692)', () => {
  let db: TestDatabase;
  let app: TestApp | undefined;
  beforeAll(async () => {
    db = await createTestDatabase('key_bounds');
    await createIdempotencyTable(db.pool());
  });
  afterEach(() => app?.close());
  afterAll(() => db?.drop());
  const store = () => new PostgresIdempotencyStore(db.pool({ max: 2 }), { sweeper: false });

  it('refuses a 3 KB service at start-up, with the limit and the option to shorten', async () => {
    const starting = launch(store(), 'billing-'.repeat(375));
    await expect(starting).rejects.toThrow(IdempotencyConfigurationError);
    await expect(launch(store(), 'billing-'.repeat(375))).rejects.toThrow(
      /IdempotencyModule options: the longest store key this builds is \d+ bytes \(keyPrefix 11, service 3000, escaped, and a key of up to 600\), and the store PostgresIdempotencyStore takes keys of at most 2692 bytes: every record would fail on its key\. Shorten service by at least \d+ bytes\./,
    );
  });

  it('refuses NUL in a service, a keyPrefix or a scope, naming it', async () => {
    await expect(launch(store(), 'bill\u0000ing')).rejects.toThrow(
      'IdempotencyModule options: service holds the control character U+0000 (NUL) at index 4',
    );
    await expect(
      createTestApp({ idempotency: { store: store(), service: 'billing', keyPrefix: 'idem\u0000' } }),
    ).rejects.toThrow('keyPrefix holds the control character U+0000 (NUL)');

    @Injectable()
    class ScopedHandler {
      @SqsMessageHandler(OrderCreated)
      @Idempotent({ scope: 'orders\u0000v2' })
      async on(): Promise<void> {}
    }
    @Module({ providers: [ScopedHandler] })
    class ScopedModule {}
    await expect(
      createTestApp({ idempotency: { store: store(), service: 'billing' }, imports: [ScopedModule] }),
    ).rejects.toThrow('@Idempotent() on ScopedHandler.on: scope holds the control character U+0000 (NUL)');
  });

  it('starts with a name that fits to the byte, and claims its longest key; one byte more does not start', async () => {
    const service = randomName(2692 - 600 - FIXED_BYTES);
    app = await launch(store(), service);
    expect((await app.sqs.send(orderCreated(LONGEST_KEY))).status).toBe('OK');
    expect((await app.sqs.send(orderCreated(LONGEST_KEY))).status).toBe('DUPLICATE');
    expect(app.get(OrdersLedger).calls).toBe(1);
    await expect(launch(store(), `${service}x`)).rejects.toThrow(
      /at most 2692 bytes.*Shorten service by at least 1 bytes/,
    );
  });

  it('holds the limit the database has: 2692 bytes of key go in, 2693 are refused', async () => {
    const raw = store();
    await expect(raw.tryAcquire(randomName(2692), 60_000, 't1')).resolves.toBe('ACQUIRED');
    await expect(raw.tryAcquire(randomName(2693), 60_000, 't2')).rejects.toThrow(
      /index row size \d+ exceeds/,
    );
  });
});

describe('key bounds on DynamoDB (maxKeyBytes 2048)', () => {
  let dynamo: DynaliteServer;
  let table: string;
  let app: TestApp | undefined;
  beforeAll(async () => {
    dynamo = await startDynalite();
    table = await dynamo.createTable();
  });
  afterEach(() => app?.close());
  afterAll(() => dynamo?.stop());
  const store = () =>
    new DynamoDbIdempotencyStore({ tableName: table, client: dynamo.client(), checkTableOnStartup: false });

  it('starts with a name that fits to the byte and claims its longest key; one byte more does not start', async () => {
    const service = randomName(2048 - 600 - FIXED_BYTES);
    app = await launch(store(), service);
    expect((await app.sqs.send(orderCreated(LONGEST_KEY))).status).toBe('OK');
    expect((await app.sqs.send(orderCreated(LONGEST_KEY))).status).toBe('DUPLICATE');
    await expect(launch(store(), `${service}x`)).rejects.toThrow(
      /the store DynamoDbIdempotencyStore takes keys of at most 2048 bytes.*Shorten service by at least 1 bytes/,
    );
  });

  it('holds the limit DynamoDB has: 2048 bytes of partition key go in, 2049 are refused', async () => {
    const raw = store();
    await expect(raw.tryAcquire('k'.repeat(2048), 60_000, 't1')).resolves.toBe('ACQUIRED');
    await expect(raw.tryAcquire('k'.repeat(2049), 60_000, 't2')).rejects.toThrow(
      /exceeded the maximum size limit of ?2048 bytes/,
    );
  });
});
