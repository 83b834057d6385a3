import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  DynamoDBClientConfig,
  GetItemCommand,
  ScalarAttributeType,
} from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { freePort } from './redis-server';

/**
 * dynalite (a DynamoDB implementation on LevelDB, in memory here) in this process, on a free port:
 * the real HTTP API the SDK speaks, conditions evaluated by its own engine. What it does not do,
 * and Amazon DynamoDB does: return the item with a failed condition (ALL_OLD), which
 * {@link emulateAllOldItems} adds where a test needs it; TTL deletion; throttling.
 */
export interface DynaliteServer {
  endpoint: string;
  /** Settings of a client for this server (endpoint, region, dummy credentials). */
  clientConfig: DynamoDBClientConfig;
  /** A new client for this server (destroy it, or let `stop` find its sockets closed). */
  client(config?: DynamoDBClientConfig): DynamoDBClient;
  /** Creates a table (a fresh unique name unless given) with string keys; returns its name. */
  createTable(options?: TableOptions): Promise<string>;
  deleteTable(tableName: string): Promise<void>;
  stop(): Promise<void>;
}

export interface TableOptions {
  name?: string;
  partitionKey?: string;
  /** Type of the partition key. Default `'S'`. */
  partitionKeyType?: ScalarAttributeType;
  sortKey?: string;
}

let tables = 0;

/**
 * Starts dynalite in this process (tests), or with `childProcess` in a process of its own (the
 * benchmark, so that the server's CPU is not the measured client's).
 */
export async function startDynalite(options: { childProcess?: boolean } = {}): Promise<DynaliteServer> {
  const { endpoint, close } = options.childProcess ? await listenInChild() : await listenHere();
  const clientConfig: DynamoDBClientConfig = {
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  };
  const admin = new DynamoDBClient(clientConfig);
  return {
    endpoint,
    clientConfig,
    client: (config = {}) => new DynamoDBClient({ ...clientConfig, ...config }),
    async createTable({ name, partitionKey = 'id', partitionKeyType = 'S', sortKey } = {}) {
      const tableName = name ?? `idempotency-${process.pid}-${++tables}`;
      await admin.send(
        new CreateTableCommand({
          TableName: tableName,
          AttributeDefinitions: [
            { AttributeName: partitionKey, AttributeType: partitionKeyType },
            ...(sortKey ? [{ AttributeName: sortKey, AttributeType: 'S' as const }] : []),
          ],
          KeySchema: [
            { AttributeName: partitionKey, KeyType: 'HASH' },
            ...(sortKey ? [{ AttributeName: sortKey, KeyType: 'RANGE' as const }] : []),
          ],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
      await waitForTable(admin, tableName, 'ACTIVE');
      return tableName;
    },
    async deleteTable(tableName: string) {
      await admin.send(new DeleteTableCommand({ TableName: tableName }));
      await waitForTable(admin, tableName, 'gone');
    },
    async stop() {
      admin.destroy();
      await close();
    },
  };
}

/** Tables change state a moment after the call (dynalite's createTableMs: 0 is a timer too). */
async function waitForTable(
  admin: DynamoDBClient,
  tableName: string,
  state: 'ACTIVE' | 'gone',
): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const status = await admin.send(new DescribeTableCommand({ TableName: tableName })).then(
      ({ Table }) => Table?.TableStatus,
      (error: { name?: string }) => {
        if (error.name === 'ResourceNotFoundException') return 'gone';
        throw error;
      },
    );
    if (status === state) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`table ${tableName} did not become ${state}`);
}

async function listenHere(): Promise<{ endpoint: string; close(): Promise<void> }> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      // dynalite's close waits for open (keep-alive) connections: cut them first.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function listenInChild(): Promise<{ endpoint: string; close(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      require.resolve('dynalite/cli.js'),
      ...['--host', '127.0.0.1', '--port', String(port)],
      ...['--createTableMs', '0', '--deleteTableMs', '0', '--updateTableMs', '0'],
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`dynalite exited at start-up (${code})`)));
    child.stdout!.on('data', (chunk) => String(chunk).includes('listening') && resolve());
  });
  child.removeAllListeners('exit');
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

/** Requests a client sent, per operation (`PutItem`, `GetItem`, ...), counted as commands are sent. */
export type RequestCounts = Record<string, number>;

/** Counts every command `client` sends from now on (retries of one command count once). */
export function countRequests(client: DynamoDBClient): RequestCounts {
  const counts: RequestCounts = {};
  client.middlewareStack.add(
    (next, context) => (args) => {
      const operation = String(context.commandName).replace(/Command$/, '');
      counts[operation] = (counts[operation] ?? 0) + 1;
      return next(args);
    },
    { step: 'initialize', name: 'countRequests' },
  );
  return counts;
}

/** Total of a {@link RequestCounts}. */
export const totalRequests = (counts: RequestCounts): number =>
  Object.values(counts).reduce((sum, count) => sum + count, 0);

/**
 * Makes `client` behave as Amazon DynamoDB does where dynalite does not: a write whose condition
 * fails with `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'` carries the item that failed it
 * (`error.Item`). The item is read through `reader`, a separate client, so request counts on
 * `client` stay what they would be on Amazon DynamoDB.
 */
export function emulateAllOldItems(client: DynamoDBClient, reader: DynamoDBClient): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        const input = args.input as {
          TableName?: string;
          Key?: GetItemCommand['input']['Key'];
          Item?: GetItemCommand['input']['Key'];
          ReturnValuesOnConditionCheckFailure?: string;
        };
        const failed = error as { name?: string; Item?: unknown };
        if (
          failed?.name === 'ConditionalCheckFailedException' &&
          input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' &&
          failed.Item === undefined
        ) {
          const key = input.Key ?? (await keyOf(reader, input.TableName!, input.Item!));
          const { Item } = await reader.send(
            new GetItemCommand({ TableName: input.TableName, Key: key, ConsistentRead: true }),
          );
          failed.Item = Item;
        }
        throw error;
      }
    },
    { step: 'initialize', name: 'emulateAllOldItems', priority: 'high' },
  );
}

const keySchemas = new Map<string, string[]>();

/** The key attributes of an item (a PutItem's `Item` holds them among the others). */
async function keyOf(
  reader: DynamoDBClient,
  tableName: string,
  item: NonNullable<GetItemCommand['input']['Key']>,
): Promise<NonNullable<GetItemCommand['input']['Key']>> {
  let names = keySchemas.get(tableName);
  if (!names) {
    const { Table } = await reader.send(new DescribeTableCommand({ TableName: tableName }));
    names = (Table?.KeySchema ?? []).map((element) => element.AttributeName!);
    keySchemas.set(tableName, names);
  }
  return Object.fromEntries(names.map((name) => [name, item[name]]));
}
