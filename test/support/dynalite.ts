import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  DynamoDBClientConfig,
  GetItemCommand,
  ScalarAttributeType,
} from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import type { AddressInfo } from 'node:net';

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

export async function startDynalite(): Promise<DynaliteServer> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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
      return tableName;
    },
    async stop() {
      admin.destroy();
      // dynalite's close waits for open (keep-alive) connections: cut them first.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
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
