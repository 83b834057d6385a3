import type { DynamoDBClient, DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';

/**
 * What `DynamoDbIdempotencyStore` is configured with: the table, its key names, and the client (one
 * you own, or the settings of one the store creates). Only types here: `@aws-sdk/client-dynamodb`
 * is an optional peer, and these declarations are what an app compiles against.
 */

/**
 * The client the store sends its commands through: a `DynamoDBClient` (from any copy of the SDK;
 * only `send` is used). The store never closes a client you pass in.
 */
export type DynamoDbIdempotencyClient = Pick<DynamoDBClient, 'send'>;

/** Options of `DynamoDbIdempotencyStore`. */
export interface DynamoDbIdempotencyStoreOptions {
  /** The table's name (see docs/stores/dynamodb.md for its definition: a string partition key, and TTL on). */
  tableName: string;
  /**
   * A `DynamoDBClient` you own (and destroy). Give it bounded retries and timeouts: spread
   * {@link recommendedDynamoDbClientConfig} into its config. Without it, the store creates its own
   * client from `clientConfig` on its first command and destroys it on application shutdown.
   */
  client?: DynamoDbIdempotencyClient;
  /**
   * Settings of the client the store creates when `client` is not given (region, endpoint,
   * credentials, ...), applied over {@link recommendedDynamoDbClientConfig}. Default: `{}` (the
   * region and credentials of the environment, as in Lambda).
   */
  clientConfig?: DynamoDBClientConfig;
  /** Name of the table's partition key, a string (`S`) attribute holding the idempotency key. Default `'id'`. */
  partitionKey?: string;
  /**
   * For a table whose key has a sort key too (a single-table design): its name and the fixed string
   * every idempotency item gets in it. The idempotency key stays in the partition key, so the keys
   * spread over partitions. Default: none (the table's key is the partition key alone).
   *
   * @example
   * ```ts
   * sortKey: { name: 'sk', value: 'idempotency' }
   * ```
   */
  sortKey?: { name: string; value: string };
  /**
   * Name of the attribute holding the expiry in epoch **seconds**, the one DynamoDB's TTL is enabled
   * on (it deletes expired items, typically within days). Default `'expiresAt'`.
   */
  ttlAttribute?: string;
  /**
   * Check the table when the application starts (`onModuleInit`, one `DescribeTable`): a missing
   * table or a key schema other than the store's options stops the start-up with a
   * `DynamoDbIdempotencyTableError` that says how to fix it. Set `false` where the role may not call
   * `dynamodb:DescribeTable`. Default `true`.
   */
  checkTableOnStartup?: boolean;
  /**
   * The clock, in epoch milliseconds. Default `Date.now`. Expiry is decided by comparing stored
   * times with this clock, so every host sharing the table must agree on the time (see docs/stores/dynamodb.md:
   * clock skew shortens or lengthens a lease by the skew).
   */
  clock?: () => number;
}

/**
 * DynamoDB client settings for an idempotency store: every call fails within a few seconds instead
 * of hanging or retrying for long. The SDK's defaults put no timeout on a request (a connection
 * that stops answering waits forever) and retry three times; a stuck claim would hold a batch past
 * its lease. With these, one store call fails within about 2 × (1 s to connect + 2 s for the
 * request) plus at most 1 s of back-off, and the record fails closed (`onStoreError`); SQS
 * redelivers it. The store applies them to the clients it creates; spread them into your own.
 *
 * @example
 * ```ts
 * import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
 * import { recommendedDynamoDbClientConfig } from 'nestjs-idempotent-sqs/dynamodb';
 *
 * const client = new DynamoDBClient({ ...recommendedDynamoDbClientConfig, region: 'eu-west-1' });
 * ```
 */
export const recommendedDynamoDbClientConfig = Object.freeze({
  /** One retry: a throttled or dropped request gets a second chance, then the record fails closed. */
  maxAttempts: 2,
  requestHandler: Object.freeze({
    /** Bound the TCP/TLS connection set-up. */
    connectionTimeout: 1_000,
    /** Bound the whole request and response (DynamoDB answers in milliseconds). */
    requestTimeout: 2_000,
    /** Fail a request past `requestTimeout` (the SDK only warns without it). */
    throwOnRequestTimeout: true,
  }),
} satisfies DynamoDBClientConfig);
