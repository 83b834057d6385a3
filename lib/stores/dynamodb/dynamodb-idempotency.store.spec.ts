import { DeleteItemCommand, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { ConsoleLogger, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  countRequests,
  DynaliteServer,
  emulateAllOldItems,
  startDynalite,
} from '../../../test/support/dynalite';
import { describeIdempotencyStore } from '../../testing';
import { IdempotencyConfigurationError } from '../../common/sqs-idempotency.error';
import { AcquireResult } from '../idempotency-store.interface';
import { DynamoDbIdempotencyStore, DynamoDbIdempotencyStoreOptions } from './dynamodb-idempotency.store';
import { DynamoDbIdempotencyTableError } from './dynamodb-table.check';

let dynamo: DynaliteServer;
let table: string;
let sortKeyTable: string;

beforeAll(async () => {
  dynamo = await startDynalite();
  [table, sortKeyTable] = await Promise.all([
    dynamo.createTable(),
    dynamo.createTable({ partitionKey: 'pk', sortKey: 'sk' }),
  ]);
});
afterAll(() => dynamo.stop());

/** A store over a fresh client, with three more clients (other instances) racing it. */
function dynamoFixture(
  options: Partial<DynamoDbIdempotencyStoreOptions> & { allOld?: boolean; fakeClock?: boolean } = {},
) {
  const { allOld, fakeClock, ...storeOptions } = options;
  const reader = dynamo.client();
  const clients = [0, 1, 2, 3].map(() => dynamo.client());
  if (allOld) for (const client of clients) emulateAllOldItems(client, reader);
  let now = Date.now();
  const clock = fakeClock ? () => now : undefined;
  const [store, ...peers] = clients.map(
    (client) => new DynamoDbIdempotencyStore({ tableName: table, client, clock, ...storeOptions }),
  );
  return {
    store,
    peers,
    advanceTime: fakeClock ? (ms: number) => void (now += ms) : undefined,
    dispose: () => [reader, ...clients].forEach((client) => client.destroy()),
  };
}

// dynalite returns no item with a failed condition: a failed claim answers from a consistent read.
// Expiry is the stores' clock, moved by the kit: the cases do not race real time on a busy machine.
// The store has no batch methods (the module claims and completes key by key with it).
describeIdempotencyStore('DynamoDbIdempotencyStore on dynalite', () => dynamoFixture({ fakeClock: true }), {
  batches: false,
});
// Amazon DynamoDB returns it (ALL_OLD): the failed claim answers from it, with no read.
describeIdempotencyStore(
  'DynamoDbIdempotencyStore, failed claims return the item (as on AWS)',
  () => dynamoFixture({ allOld: true, fakeClock: true }),
  { batches: false },
);
// The real clock (Date.now), with TTLs long enough for dynalite in this process to answer in time.
describeIdempotencyStore(
  'DynamoDbIdempotencyStore on a table with a sort key, in real time',
  () =>
    dynamoFixture({ tableName: sortKeyTable, partitionKey: 'pk', sortKey: { name: 'sk', value: 'idem' } }),
  { shortTtlMs: 400, batches: false },
);

describe('DynamoDbIdempotencyStore in DynamoDB', () => {
  let client: DynamoDBClient;
  let now: number;
  let store: DynamoDbIdempotencyStore;
  const key = () => `dynamodb-store-spec:${randomUUID()}`;
  const itemOf = async (k: string, tableName = table, Key = { id: { S: k } }) =>
    (await client.send(new GetItemCommand({ TableName: tableName, Key, ConsistentRead: true }))).Item;

  beforeEach(() => {
    client = dynamo.client();
    now = 1_800_000_000_000;
    store = new DynamoDbIdempotencyStore({ tableName: table, client, clock: () => now });
  });
  afterEach(() => client.destroy());

  it('holds the token and the lease (ms, and seconds rounded up for TTL), then COMPLETED with the ttl', async () => {
    const k = key();
    await store.tryAcquire(k, 30_000.5, 'token-a');
    expect(await itemOf(k)).toEqual({
      id: { S: k },
      status: { S: 'IN_PROGRESS' },
      token: { S: 'token-a' },
      expiresAtMs: { N: String(now + 30_001) },
      expiresAt: { N: String(Math.ceil((now + 30_001) / 1000)) },
    });
    now += 1_000;
    await store.markComplete(k, 86_400_000, 'token-a');
    expect(await itemOf(k)).toEqual({
      id: { S: k },
      status: { S: 'COMPLETED' },
      token: { S: 'token-a' },
      expiresAtMs: { N: String(now + 86_400_000) },
      expiresAt: { N: String((now + 86_400_000) / 1000) },
    });
  });

  it('writes the claim’s fingerprint and message id in the put, keeps them through its completion', async () => {
    const k = key();
    const claim = { fingerprint: 'Zm9vYmFyYmF6cXV4', messageId: 'message-1' };
    await store.tryAcquire(k, 30_000, 'token-a', claim);
    expect(await itemOf(k)).toMatchObject({
      fingerprint: { S: claim.fingerprint },
      messageId: { S: 'message-1' },
    });
    const counts = countRequests(client);
    expect(await store.tryAcquire(k, 30_000, 'token-b', { fingerprint: 'other' })).toEqual({
      result: AcquireResult.IN_PROGRESS,
      ...claim,
    });
    // The fingerprint comes from the item that answers the claim: no request of its own.
    expect(counts).toEqual({ PutItem: 1, GetItem: 1 });
    await store.markComplete(k, 86_400_000, 'token-a');
    expect(await itemOf(k)).toMatchObject({
      status: { S: 'COMPLETED' },
      fingerprint: { S: claim.fingerprint },
    });
    // Past the dedup window a plain claim puts a whole new item: no fingerprint is left behind.
    now += 86_400_001;
    expect(await store.tryAcquire(k, 30_000, 'token-c')).toBe(AcquireResult.ACQUIRED);
    expect(await itemOf(k)).not.toHaveProperty('fingerprint');
    expect(await store.tryAcquire(k, 30_000, 'token-d', { fingerprint: 'x' })).toBe(
      AcquireResult.IN_PROGRESS,
    );
  });

  it('writes no expiry attribute for ttl Infinity, and removes the lease’s on completion', async () => {
    const [forever, completedForever] = [key(), key()];
    await store.tryAcquire(forever, Infinity, 'token-a');
    expect(await itemOf(forever)).toEqual({
      id: { S: forever },
      status: { S: 'IN_PROGRESS' },
      token: { S: 'token-a' },
    });
    await store.tryAcquire(completedForever, 30_000, 'token-b');
    await store.markComplete(completedForever, Infinity, 'token-b');
    expect(await itemOf(completedForever)).toEqual({
      id: { S: completedForever },
      status: { S: 'COMPLETED' },
      token: { S: 'token-b' },
    });
    now += 100 * 365 * 86_400_000;
    expect(await store.tryAcquire(forever, 1_000, 'token-c')).toBe(AcquireResult.IN_PROGRESS);
    expect(await store.tryAcquire(completedForever, 1_000, 'token-c')).toBe(AcquireResult.COMPLETED);
  });

  it('lets a sub-millisecond TTL expire (rounded up to 1 ms, never to "no expiry")', async () => {
    const k = key();
    await store.tryAcquire(k, 0.2, 'token-a');
    expect((await itemOf(k))?.expiresAtMs).toEqual({ N: String(now + 1) });
    expect(await store.tryAcquire(k, 30_000, 'token-b')).toBe(AcquireResult.IN_PROGRESS);
    now += 1;
    expect(await store.tryAcquire(k, 30_000, 'token-b')).toBe(AcquireResult.ACQUIRED);
  });

  it.each([0, -1, NaN, -Infinity])('refuses the TTL %p and writes nothing', async (ttl) => {
    const k = key();
    await expect(store.tryAcquire(k, ttl, 'token-a')).rejects.toThrow(
      `DynamoDbIdempotencyStore: a TTL must be a positive number of milliseconds, got ${ttl}.`,
    );
    await expect(store.markComplete(k, ttl, 'token-a')).rejects.toThrow(RangeError);
    await expect(store.extend(k, ttl, 'token-a')).rejects.toThrow(RangeError);
    expect(await itemOf(k)).toBeUndefined();
  });

  it('treats an expired item that TTL has not deleted yet as absent: the condition compares the expiry itself', async () => {
    const k = key();
    // What DynamoDB may still hold days after the expiry: TTL deletes lazily.
    await client.send(
      new PutItemCommand({
        TableName: table,
        Item: {
          id: { S: k },
          status: { S: 'COMPLETED' },
          token: { S: 'old' },
          expiresAtMs: { N: String(now - 3 * 86_400_000) },
          expiresAt: { N: String((now - 3 * 86_400_000) / 1000) },
        },
      }),
    );
    expect(await store.tryAcquire(k, 30_000, 'token-a')).toBe(AcquireResult.ACQUIRED);
    expect((await itemOf(k))?.token).toEqual({ S: 'token-a' });
  });

  it('sends one request per step; a failed claim reads the item once where the server does not return it', async () => {
    const counts = countRequests(client);
    const k = key();
    await store.tryAcquire(k, 30_000, 'token-a');
    expect(counts).toEqual({ PutItem: 1 });
    await store.markComplete(k, 60_000, 'token-a');
    expect(counts).toEqual({ PutItem: 1, UpdateItem: 1 });
    expect(await store.tryAcquire(k, 30_000, 'token-b')).toBe(AcquireResult.COMPLETED);
    expect(counts).toEqual({ PutItem: 2, UpdateItem: 1, GetItem: 1 });
    await store.forget(key(), 'token-c');
    await store.extend(k, 30_000, 'token-a');
    expect(counts).toEqual({ PutItem: 2, UpdateItem: 2, GetItem: 1, DeleteItem: 1 });
  });

  it('answers a failed claim from the returned item alone where the server returns it (one request)', async () => {
    const reader = dynamo.client();
    emulateAllOldItems(client, reader);
    const counts = countRequests(client);
    try {
      const [live, completed] = [key(), key()];
      await store.tryAcquire(live, 30_000, 'token-a');
      await store.tryAcquire(completed, 30_000, 'token-b');
      await store.markComplete(completed, 60_000, 'token-b');
      expect(await store.tryAcquire(live, 30_000, 'token-c')).toBe(AcquireResult.IN_PROGRESS);
      expect(await store.tryAcquire(completed, 30_000, 'token-c')).toBe(AcquireResult.COMPLETED);
      expect(counts).toEqual({ PutItem: 4, UpdateItem: 1 });
    } finally {
      reader.destroy();
    }
  });

  describe('a key that changes between the failed claim and the read', () => {
    let other: DynamoDBClient;
    beforeEach(() => {
      other = dynamo.client();
    });
    afterEach(() => other.destroy());

    /** Runs `before(operation, n)` ahead of the n-th command of each operation the store sends. */
    const interleave = (before: (operation: string, n: number) => Promise<void>) => {
      const seen: Record<string, number> = {};
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const operation = String(context.commandName).replace(/Command$/, '');
          seen[operation] = (seen[operation] ?? 0) + 1;
          await before(operation, seen[operation]);
          return next(args);
        },
        { step: 'initialize', name: 'interleave' },
      );
    };
    const release = (k: string) =>
      other.send(new DeleteItemCommand({ TableName: table, Key: { id: { S: k } } }));
    const claimElsewhere = (k: string) =>
      other.send(
        new PutItemCommand({
          TableName: table,
          Item: {
            id: { S: k },
            status: { S: 'IN_PROGRESS' },
            token: { S: 'elsewhere' },
            expiresAtMs: { N: String(now + 30_000) },
          },
        }),
      );

    it('claims once more when the holder released it in between, and wins', async () => {
      const k = key();
      await claimElsewhere(k);
      interleave(async (operation, n) => {
        if (operation === 'GetItem' && n === 1) await release(k);
      });
      expect(await store.tryAcquire(k, 30_000, 'token-a')).toBe(AcquireResult.ACQUIRED);
      expect((await itemOf(k))?.token).toEqual({ S: 'token-a' });
    });

    it('counts an item whose lease ends at this very millisecond as expired, as the claim’s condition does', async () => {
      const k = key();
      await claimElsewhere(k);
      interleave(async (operation, n) => {
        if (operation !== 'GetItem' || n !== 1) return;
        // Another instance, its clock behind, now holds a lease that ends exactly at this store's `now`.
        await other.send(
          new PutItemCommand({
            TableName: table,
            Item: {
              id: { S: k },
              status: { S: 'IN_PROGRESS' },
              token: { S: 'behind' },
              expiresAtMs: { N: String(now) },
            },
          }),
        );
      });
      expect(await store.tryAcquire(k, 30_000, 'token-a')).toBe(AcquireResult.ACQUIRED);
      expect((await itemOf(k))?.token).toEqual({ S: 'token-a' });
    });

    it('answers IN_PROGRESS (the record is redelivered) when it changes again on the second try', async () => {
      const k = key();
      await claimElsewhere(k);
      const counts = countRequests(client);
      interleave(async (operation, n) => {
        if (operation === 'GetItem' && n <= 2) await release(k);
        if (operation === 'PutItem' && n === 2) await claimElsewhere(k);
      });
      expect(await store.tryAcquire(k, 30_000, 'token-a')).toBe(AcquireResult.IN_PROGRESS);
      expect(counts).toEqual({ PutItem: 2, GetItem: 2 });
      expect(await itemOf(k)).toBeUndefined(); // nothing of token-a was written
    });
  });

  it('fails a claim that finds an item it does not understand (never a third answer)', async () => {
    const k = key();
    await client.send(
      new PutItemCommand({ TableName: table, Item: { id: { S: k }, status: { S: 'DONE' } } }),
    );
    await expect(store.tryAcquire(k, 30_000, 'token-a')).rejects.toThrow(
      'the item holds status "DONE", neither IN_PROGRESS nor COMPLETED: something other than this store writes ' +
        'to these keys',
    );
    const bare = key();
    await client.send(new PutItemCommand({ TableName: table, Item: { id: { S: bare } } }));
    await expect(store.tryAcquire(bare, 30_000, 'token-a')).rejects.toThrow(
      'the item holds status undefined, neither IN_PROGRESS nor COMPLETED',
    );
  });

  it('reads a held item strongly consistent (an eventually consistent read may miss the claim that failed the put)', async () => {
    const k = key();
    await store.tryAcquire(k, 30_000, 'token-a');
    const send = jest.spyOn(client, 'send');
    expect(await store.tryAcquire(k, 30_000, 'token-b')).toBe(AcquireResult.IN_PROGRESS);
    const reads = send.mock.calls
      .map(([command]) => command)
      .filter((command) => command instanceof GetItemCommand);
    expect(reads.map((command) => (command as GetItemCommand).input.ConsistentRead)).toEqual([true]);
  });

  it('removes the expiry of a lease extended with ttl Infinity', async () => {
    const k = key();
    await store.tryAcquire(k, 30_000, 'token-a');
    expect(await store.extend(k, Infinity, 'token-a')).toBe(true);
    expect(await itemOf(k)).toEqual({ id: { S: k }, status: { S: 'IN_PROGRESS' }, token: { S: 'token-a' } });
  });

  it('keeps a single-table design’s other items apart: the sort key holds the fixed value', async () => {
    const k = key();
    const single = new DynamoDbIdempotencyStore({
      tableName: sortKeyTable,
      client,
      partitionKey: 'pk',
      sortKey: { name: 'sk', value: 'idempotency' },
      ttlAttribute: 'ttl',
      clock: () => now,
    });
    await client.send(
      new PutItemCommand({ TableName: sortKeyTable, Item: { pk: { S: k }, sk: { S: 'profile' } } }),
    );
    expect(await single.tryAcquire(k, 30_000, 'token-a')).toBe(AcquireResult.ACQUIRED);
    expect(await itemOf(k, sortKeyTable, { pk: { S: k }, sk: { S: 'idempotency' } } as never)).toEqual({
      pk: { S: k },
      sk: { S: 'idempotency' },
      status: { S: 'IN_PROGRESS' },
      token: { S: 'token-a' },
      expiresAtMs: { N: String(now + 30_000) },
      ttl: { N: String((now + 30_000) / 1000) },
    });
    expect(await single.forget(k, 'token-a')).toBe(true);
    expect(await itemOf(k, sortKeyTable, { pk: { S: k }, sk: { S: 'profile' } } as never)).toEqual({
      pk: { S: k },
      sk: { S: 'profile' },
    });
  });

  it('declares itself shared, and writes its longest TTL exactly', async () => {
    expect(store.shared).toBe(true);
    const k = key();
    await store.tryAcquire(k, store.maxTtlMs, 'token-a');
    expect((await itemOf(k))?.expiresAtMs).toEqual({ N: (BigInt(now) + BigInt(store.maxTtlMs)).toString() });
  });

  it('refuses options that cannot make an item', () => {
    const make = (options: Partial<DynamoDbIdempotencyStoreOptions>) => () =>
      new DynamoDbIdempotencyStore({ tableName: table, client, ...options });
    expect(make({ ttlAttribute: 'expiresAtMs' })).toThrow('attribute names must be distinct');
    expect(make({ partitionKey: 'token' })).toThrow('attribute names must be distinct');
    expect(make({ sortKey: { name: 'id', value: 'x' } })).toThrow('attribute names must be distinct');
    expect(make({ sortKey: { name: 'sk', value: '' } })).toThrow('sortKey.value must be a non-empty string');
    expect(make({ sortKey: { name: 'sk', value: 42 as never } })).toThrow(
      'DynamoDbIdempotencyStore options: sortKey: value must be a string, got number 42.',
    );
    expect(make({ partitionKey: 42 as never })).toThrow(
      'DynamoDbIdempotencyStore options: partitionKey must be a string, got number 42.',
    );
    expect(make({ partitionKey: '' })).toThrow(
      `DynamoDbIdempotencyStore: the item's attribute names must be distinct non-empty strings, got partitionKey "", ` +
        `sortKey undefined, ttlAttribute "expiresAt" beside the store's own status, token, expiresAtMs, fingerprint, ` +
        'messageId.',
    );
    expect(make({ ttlAttribute: '' })).toThrow('attribute names must be distinct non-empty strings');
    // DynamoDB bounds a sort key at 1,024 bytes (UTF-8), not characters.
    expect(make({ sortKey: { name: 'sk', value: 'x'.repeat(1024) } })).not.toThrow();
    expect(make({ sortKey: { name: 'sk', value: 'é'.repeat(513) } })).toThrow(
      'DynamoDbIdempotencyStore: sortKey.value is 1026 bytes; DynamoDB takes sort keys of at most 1024 bytes. ' +
        'Pick a shorter value.',
    );
    expect(make({ tabelName: table } as never)).toThrow('DynamoDbIdempotencyStore options');
  });

  it('names itself when given a fingerprint claim it cannot keep', async () => {
    await expect(store.tryAcquire(key(), 30_000, 'token-a', { fingerprint: 'a b' })).rejects.toThrow(
      'DynamoDbIdempotencyStore: a fingerprint must be a non-empty string without spaces, got "a b".',
    );
  });

  it.each([undefined, ''])(
    'given no table (tableName %p: an unset variable), is built but refuses to start and to claim',
    async (tableName) => {
      // Built without a throw: a store the tests replace with overrideProvider is never started.
      const missing = new DynamoDbIdempotencyStore({ tableName: tableName as string, client });
      const given = tableName === '' ? "''" : 'undefined';
      const refusal = new RegExp(
        `^DynamoDbIdempotencyStore: nothing to connect to: it was given tableName ${given} \\(an unset environment ` +
          'variable, such as IDEMPOTENCY_TABLE\\?\\)\\. Give tableName',
      );
      await expect(missing.onModuleInit()).rejects.toThrow(refusal);
      await expect(missing.onModuleInit()).rejects.toBeInstanceOf(IdempotencyConfigurationError);
      await expect(missing.tryAcquire(key(), 30_000, 'token-a')).rejects.toThrow(refusal);
    },
  );
});

describe('DynamoDbIdempotencyStore on a table that cannot hold its items', () => {
  let client: DynamoDBClient;
  beforeEach(() => (client = dynamo.client()));
  afterEach(() => client.destroy());

  /** What the start-up check (`checkTableOnStartup: true`) raises for these options. */
  const startUpError = (options: Partial<DynamoDbIdempotencyStoreOptions>) =>
    new DynamoDbIdempotencyStore({ tableName: table, client, checkTableOnStartup: true, ...options })
      .onModuleInit()
      .then(
        () => undefined,
        (error: unknown) => error as DynamoDbIdempotencyTableError,
      );

  it('starts without a request, and fails the first call with the error the start-up check raises', async () => {
    const numeric = await dynamo.createTable({ partitionKeyType: 'N' });
    const cases: Array<Partial<DynamoDbIdempotencyStoreOptions>> = [
      { tableName: 'no-such-table' },
      { tableName: sortKeyTable }, // keyed pk + sk, the store writes id
      { tableName: sortKeyTable, partitionKey: 'pk' }, // the sort key left out of the options
      { tableName: numeric }, // a numeric key
    ];
    for (const options of cases) {
      const expected = await startUpError(options);
      expect(expected).toBeInstanceOf(DynamoDbIdempotencyTableError);
      const own = dynamo.client();
      const counts = countRequests(own);
      const store = new DynamoDbIdempotencyStore({ tableName: table, client: own, ...options });
      await store.onModuleInit();
      expect(counts).toEqual({});
      const error = await store.tryAcquire(`explained:${randomUUID()}`, 30_000, 't').catch((e: unknown) => e);
      own.destroy();
      expect(error).toBeInstanceOf(DynamoDbIdempotencyTableError);
      expect(error).toMatchObject({ code: 'DYNAMODB_TABLE_UNUSABLE', message: expected!.message });
      // The call's own error is kept; a missing table needs no request to be explained.
      expect((error as Error).cause).toMatchObject({
        name: options.tableName === 'no-such-table' ? 'ResourceNotFoundException' : 'ValidationException',
      });
      expect(counts.DescribeTable).toBe(options.tableName === 'no-such-table' ? undefined : 1);
    }
  });

  it('explains a sort key the table does not have at the first call that names the key (the put takes it as an attribute)', async () => {
    const options = { sortKey: { name: 'sk', value: 'idem' } };
    const expected = await startUpError(options);
    const store = new DynamoDbIdempotencyStore({ tableName: table, client, ...options });
    const k = `explained:${randomUUID()}`;
    expect(await store.tryAcquire(k, 30_000, 't')).toBe(AcquireResult.ACQUIRED);
    await expect(store.markComplete(k, 30_000, 't')).rejects.toMatchObject({ message: expected!.message });
    await expect(store.forget(k, 't')).rejects.toMatchObject({ message: expected!.message });
  });

  it('describes the table again for a later failure (a table fixed in between is seen)', async () => {
    const counts = countRequests(client);
    const store = new DynamoDbIdempotencyStore({ tableName: sortKeyTable, client });
    for (let call = 1; call <= 2; call++) {
      await expect(store.tryAcquire(`explained:${randomUUID()}`, 30_000, 't')).rejects.toBeInstanceOf(
        DynamoDbIdempotencyTableError,
      );
      expect(counts.DescribeTable).toBe(call);
    }
  });

  it('logs what the start-up check says under its own name', async () => {
    const warned: unknown[][] = [];
    Logger.overrideLogger({ log() {}, error() {}, warn: (...args: unknown[]) => warned.push(args) });
    const send = client.send.bind(client);
    jest
      .spyOn(client, 'send')
      .mockImplementation(((command: object) =>
        command.constructor.name === 'DescribeTableCommand'
          ? Promise.reject(Object.assign(new Error('rate exceeded'), { name: 'ThrottlingException' }))
          : send(command as never)) as never);
    try {
      await new DynamoDbIdempotencyStore({
        tableName: table,
        client,
        checkTableOnStartup: true,
      }).onModuleInit();
    } finally {
      Logger.overrideLogger(new ConsoleLogger());
    }
    expect(warned).toEqual([
      [
        `Could not check table "${table}" at start-up (ThrottlingException: rate exceeded); starting anyway. ` +
          'Records fail closed (onStoreError) until DynamoDB answers.',
        'DynamoDbIdempotencyStore',
      ],
    ]);
  });

  it('leaves an error as it came when the table is as the options say, or cannot be described', async () => {
    const store = new DynamoDbIdempotencyStore({ tableName: table, client });
    // Over DynamoDB's item size: a ValidationException that is not about the table.
    const tooLarge = { fingerprint: 'f', messageId: 'm'.repeat(500_000) };
    const error = await store.tryAcquire(`explained:${randomUUID()}`, 30_000, 't', tooLarge).catch((e) => e);
    expect(error).toMatchObject({ name: 'ValidationException' });
    const send = client.send.bind(client);
    jest
      .spyOn(client, 'send')
      .mockImplementation(((command: object) =>
        command.constructor.name === 'DescribeTableCommand'
          ? Promise.reject(Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' }))
          : send(command as never)) as never);
    const denied = new DynamoDbIdempotencyStore({ tableName: sortKeyTable, client });
    await expect(denied.tryAcquire(`explained:${randomUUID()}`, 30_000, 't')).rejects.toMatchObject({
      name: 'ValidationException',
    });
  });
});

describe('DynamoDbIdempotencyStore and its client', () => {
  it('creates its client on the first command, with bounded retries and timeouts under yours, and destroys it on shutdown', async () => {
    const store = new DynamoDbIdempotencyStore({
      tableName: table,
      clientConfig: { ...dynamo.clientConfig, requestHandler: { requestTimeout: 500 } },
    });
    expect(store.client).toBeUndefined();
    expect(await store.tryAcquire(`owned:${randomUUID()}`, 30_000, 'token-a')).toBe(AcquireResult.ACQUIRED);
    const client = store.client as DynamoDBClient;
    expect(client).toBeInstanceOf(DynamoDBClient);
    expect(await client.config.maxAttempts()).toBe(2);
    // Your request-handler options over ours, merged (resolved by the SDK once a request was sent).
    expect((client.config.requestHandler as unknown as { config: object }).config).toMatchObject({
      connectionTimeout: 1_000,
      requestTimeout: 500,
      throwOnRequestTimeout: true,
    });
    const destroy = jest.spyOn(client, 'destroy');
    store.onApplicationShutdown();
    expect(destroy).toHaveBeenCalledTimes(1);
    expect(store.client).toBeUndefined();
    // Closed with its application: used again (another app made from a module that built it once), it
    // says so, and how to build one per app, instead of creating a client no one destroys.
    const closed = expect.objectContaining({
      code: 'IDEMPOTENCY_STORE_CLOSED',
      message: expect.stringContaining(
        `DynamoDbIdempotencyStore (table ${table}) is closed: the application that started it shut down`,
      ),
    });
    await expect(store.tryAcquire(`owned:${randomUUID()}`, 30_000, 'token-b')).rejects.toEqual(closed);
    await expect(store.onModuleInit()).rejects.toEqual(closed);
    expect(store.client).toBeUndefined();
  });

  it('gives the client it creates our request-handler settings when you give none', async () => {
    const store = new DynamoDbIdempotencyStore({ tableName: table, clientConfig: dynamo.clientConfig });
    expect(await store.tryAcquire(`owned:${randomUUID()}`, 30_000, 'token-a')).toBe(AcquireResult.ACQUIRED);
    const client = store.client as DynamoDBClient;
    expect((client.config.requestHandler as unknown as { config: object }).config).toMatchObject({
      connectionTimeout: 1_000,
      requestTimeout: 2_000,
      throwOnRequestTimeout: true,
    });
    store.onApplicationShutdown();
  });

  it('keeps a request handler you built as it is (nothing of ours merged into it)', async () => {
    const donor = dynamo.client(); // a handler built by the SDK (a class instance, as users build theirs)
    const requestHandler = donor.config.requestHandler;
    const store = new DynamoDbIdempotencyStore({
      tableName: table,
      clientConfig: { ...dynamo.clientConfig, requestHandler },
    });
    expect(await store.tryAcquire(`owned:${randomUUID()}`, 30_000, 'token-a')).toBe(AcquireResult.ACQUIRED);
    expect((store.client as DynamoDBClient).config.requestHandler).toBe(requestHandler);
    store.onApplicationShutdown();
    donor.destroy();
  });

  it('never destroys a client you own', async () => {
    const client = dynamo.client();
    const destroy = jest.spyOn(client, 'destroy');
    const store = new DynamoDbIdempotencyStore({ tableName: table, client });
    await store.tryAcquire(`yours:${randomUUID()}`, 30_000, 'token-a');
    store.onApplicationShutdown();
    expect(destroy).not.toHaveBeenCalled();
    expect(store.client).toBe(client);
    client.destroy();
  });
});
