import type { DynamoDBClient, DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';

/** `DynamoDbIdempotencyStore`'s options: types only, so apps compile without the optional SDK. */

/** A `DynamoDBClient` (only `send` is used); the store never closes one you pass in. */
export type DynamoDbIdempotencyClient = Pick<DynamoDBClient, 'send'>;

/** Options of `DynamoDbIdempotencyStore`. */
export interface DynamoDbIdempotencyStoreOptions {
  /** The table's name (see docs/stores/dynamodb.md for its definition: a string partition key, and TTL on). */
  tableName: string;
  /** A client you own (give it {@link recommendedDynamoDbClientConfig}); without it the store creates and destroys one. */
  client?: DynamoDbIdempotencyClient;
  /** Settings of the client the store creates, over {@link recommendedDynamoDbClientConfig}. Default `{}`. */
  clientConfig?: DynamoDBClientConfig;
  /** Name of the table's partition key, a string (`S`) attribute holding the idempotency key. Default `'id'`. */
  partitionKey?: string;
  /**
   * A table with a sort key too (single-table design): its name and the fixed value every item gets;
   * the idempotency key stays the partition key. Default: none.
   */
  sortKey?: { name: string; value: string };
  /** The attribute of the expiry in epoch **seconds**, the one DynamoDB's TTL is on. Default `'expiresAt'`. */
  ttlAttribute?: string;
  /** Check the table at start-up (`DescribeTable`): missing or misshapen stops the app. Default `true`. */
  checkTableOnStartup?: boolean;
  /** The clock, epoch ms (default `Date.now`): expiry compares stored times with it, so hosts must agree on time (docs/stores/dynamodb.md). */
  clock?: () => number;
}

/**
 * DynamoDB client settings for an idempotency store: a call fails within seconds (the SDK's defaults
 * put no timeout on a request), so a stuck claim cannot hold a batch past its lease. Applied to the
 * store's own clients; spread them into yours:
 *
 * @example
 * ```ts
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
