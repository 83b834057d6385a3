import { Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type {
  AttributeValue,
  DescribeTableCommandOutput,
  DynamoDBClient,
  DynamoDBClientConfig,
  UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { optionalPeer } from '../../common/optional-peer';
import {
  AcquireAnswer,
  AcquireResult,
  FingerprintClaim,
  IdempotencyKeyInspection,
  IdempotencyStore,
} from '../idempotency-store.interface';
import {
  answerOfItem,
  inspectionOfItem,
  ITEM_ATTRIBUTES,
  ItemExpressions,
  itemExpressions,
  ItemLayout,
  STATUS,
} from './dynamodb-idempotency.item';
import { checkFingerprintClaim, heldClaimAnswer, wholeTtlMs } from '../store-helpers';
import {
  IdempotencyStoreClosedError,
  isMissingConnection,
  missingConnectionError,
} from '../connection-refusals';
import { checkTable, explainFailure } from './dynamodb-table.check';
import { OptionShape, readOptions } from '../../common/known-options';
import { IdempotencyConfigurationError } from '../../common/sqs-idempotency.error';

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
  /**
   * Check the table at start-up (`DescribeTable`, `DescribeTimeToLive`): missing or keyed otherwise stops
   * the app, TTL on another attribute warns. Default `false`: nothing is sent at start-up, and a call that
   * fails for such a table fails with the error the check would have raised.
   */
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

const loadDynamoDb = optionalPeer(
  '@aws-sdk/client-dynamodb',
  'DynamoDbIdempotencyStore',
  () => import('@aws-sdk/client-dynamodb'),
);

type DynamoDbModule = Awaited<ReturnType<typeof loadDynamoDb>>;
type Item = Record<string, AttributeValue>;

const DYNAMODB_OPTION_SHAPE: OptionShape<DynamoDbIdempotencyStoreOptions> = {
  tableName: 'string',
  client: 'object',
  clientConfig: 'object',
  partitionKey: 'string',
  sortKey: { name: 'string', value: 'string' },
  ttlAttribute: 'string',
  checkTableOnStartup: 'boolean',
  clock: 'function',
};

/**
 * Shares dedup state through one DynamoDB table: the natural store in Lambda. Each method is one
 * conditional write (layout and conditions in `dynamodb-idempotency.item.ts`), fenced by the token;
 * expiry compares the stored epoch ms with the clock (TTL deletes lazily). The SDK is loaded on the
 * first command.
 *
 * @example
 * ```ts
 * IdempotencyModule.forRootAsync({
 *   useFactory: () => ({ store: new DynamoDbIdempotencyStore({ tableName: 'idempotency' }) }),
 * });
 * ```
 */
export class DynamoDbIdempotencyStore implements IdempotencyStore, OnModuleInit, OnApplicationShutdown {
  /** Every process using the table sees the same keys: the module needs a service identity. */
  readonly shared = true;
  /** Expiries are `now + ttl` in epoch ms: half the exact integer range leaves room for any clock. */
  readonly maxTtlMs = Math.floor(Number.MAX_SAFE_INTEGER / 2);
  /** DynamoDB's limit on a partition key value (the store key is the partition key); checked at start-up. */
  readonly maxKeyBytes = 2048;
  /** A claim's fingerprint and message id are attributes of its item. */
  readonly keepsFingerprints = true;
  private readonly logger = new Logger('DynamoDbIdempotencyStore');
  private readonly tableName: string;
  private readonly layout: ItemLayout;
  private readonly expressions: ItemExpressions;
  private readonly clock: () => number;
  private readonly checkTableOnStartup: boolean;
  private readonly ownedClientConfig: DynamoDBClientConfig | undefined;
  private connected: DynamoDbIdempotencyClient | undefined;
  private sdk: DynamoDbModule | undefined;
  private loading: Promise<DynamoDbModule> | undefined;
  /** Its own client was destroyed with its application: the store is not used again. */
  private closed = false;
  /** The `DescribeTable` in flight that explains failing calls (`explainFailure`). */
  private describing: Promise<DescribeTableCommandOutput['Table']> | undefined;

  constructor(given: DynamoDbIdempotencyStoreOptions) {
    const options = readOptions(given, DYNAMODB_OPTION_SHAPE, 'DynamoDbIdempotencyStore options');
    // A missing name is refused at start-up (`refusal()`), so a store the tests override is never refused.
    this.tableName = options.tableName;
    this.layout = {
      partitionKey: options.partitionKey ?? 'id',
      sortKey: options.sortKey,
      ttlAttribute: options.ttlAttribute ?? 'expiresAt',
    };
    checkAttributeNames(this.layout);
    this.expressions = itemExpressions(this.layout);
    this.clock = options.clock ?? Date.now;
    this.checkTableOnStartup = options.checkTableOnStartup ?? false;
    if (options.client) this.connected = options.client;
    else this.ownedClientConfig = options.clientConfig ?? {};
  }

  /** The client the store talks through (`undefined` before its first command). */
  get client(): DynamoDbIdempotencyClient | undefined {
    return this.connected;
  }

  /** One conditional put; a failed one answers from the item that failed it, else from one consistent read. */
  tryAcquire(key: string, ttlMs: number, token: string): Promise<AcquireResult>;
  /** With `claim`, the put also writes its fingerprint and message id; a held key answers with its item's. */
  tryAcquire(key: string, ttlMs: number, token: string, claim?: FingerprintClaim): Promise<AcquireAnswer>;
  async tryAcquire(key: string, ttlMs: number, token: string, claim?: FingerprintClaim) {
    if (claim) checkFingerprintClaim(claim, 'DynamoDbIdempotencyStore');
    const sdk = this.sdk ?? (await this.load());
    // A key that churns between the put and the read is claimed once more; churning again, it answers
    // IN_PROGRESS (redelivered: nothing runs twice, nothing is lost).
    for (let attempt = 0; attempt < 2; attempt++) {
      const now = this.clock();
      const held = await this.putClaim(sdk, key, token, now, expiresAtOf(now, ttlMs), claim);
      if (held === null) return AcquireResult.ACQUIRED;
      const item = held ?? (await this.read(sdk, key));
      const result = answerOfItem(item, held ? now : this.clock());
      if (result === undefined) continue;
      const kept = (attribute: string) => item?.[attribute]?.S;
      return claim
        ? heldClaimAnswer(result, kept(ITEM_ATTRIBUTES.fingerprint), kept(ITEM_ATTRIBUTES.messageId))
        : result;
    }
    return AcquireResult.IN_PROGRESS;
  }

  /** Marks `key` completed for `ttlMs` if `token` still owns it (or no live item holds it); `false`: claim lost. */
  markComplete(key: string, ttlMs: number, token: string): Promise<boolean> {
    return this.write('complete', key, token, ttlMs);
  }

  /** Deletes the claim of `token`; `true` when no live item is left, `false` when another attempt owns the key. */
  forget(key: string, token: string): Promise<boolean> {
    return this.write('forget', key, token);
  }

  /** Renews the live claim of `token` to `ttlMs` from now; `false` when it expired or was taken. */
  extend(key: string, ttlMs: number, token: string): Promise<boolean> {
    return this.write('extend', key, token, ttlMs);
  }

  /** What the table holds for `key` (one consistent `GetItem`), for the Center's lookup; expired is `UNKNOWN`. */
  async inspect(key: string): Promise<IdempotencyKeyInspection> {
    const sdk = this.sdk ?? (await this.load());
    return inspectionOfItem(await this.read(sdk, key), this.clock());
  }

  /**
   * Loads the SDK and builds the client (no request), so the first batch does not; with
   * `checkTableOnStartup`, checks the table: missing or misshapen stops the start; a TTL elsewhere warns.
   */
  async onModuleInit(): Promise<void> {
    const sdk = this.sdk ?? (await this.load());
    if (!this.checkTableOnStartup) return;
    const client = this.connected!;
    const [table, timeToLive] = await Promise.allSettled([
      client.send(new sdk.DescribeTableCommand({ TableName: this.tableName })),
      client.send(new sdk.DescribeTimeToLiveCommand({ TableName: this.tableName })),
    ]);
    for (const warning of checkTable(this.tableName, this.layout, { table, timeToLive })) {
      this.logger.warn(warning);
    }
  }

  /**
   * Destroys the client the store created, and the store with it: used again, it refuses. A client you
   * passed in stays open (it is yours).
   */
  close(): void {
    if (this.ownedClientConfig === undefined) return;
    this.closed = true;
    (this.connected as DynamoDBClient | undefined)?.destroy();
    this.connected = undefined;
    this.loading = undefined;
    this.sdk = undefined;
  }

  /** Nest lifecycle hook: destroys an owned client when the application shuts down. */
  onApplicationShutdown(): void {
    this.close();
  }

  /** Puts the claim if no live item holds the key: `null` when it did, else the failing item (if returned). */
  private async putClaim(
    sdk: DynamoDbModule,
    key: string,
    token: string,
    now: number,
    expiresAtMs: number | undefined,
    claim: FingerprintClaim | undefined,
  ): Promise<Item | undefined | null> {
    const { partitionKey, sortKey, ttlAttribute } = this.layout;
    const item: Item = {
      [partitionKey]: { S: key },
      [ITEM_ATTRIBUTES.status]: STATUS.inProgress,
      [ITEM_ATTRIBUTES.token]: { S: token },
    };
    if (claim) {
      item[ITEM_ATTRIBUTES.fingerprint] = { S: claim.fingerprint };
      if (claim.messageId) item[ITEM_ATTRIBUTES.messageId] = { S: claim.messageId };
    }
    if (sortKey) item[sortKey.name] = { S: sortKey.value };
    if (expiresAtMs !== undefined) {
      item[ITEM_ATTRIBUTES.expiresAtMs] = { N: String(expiresAtMs) };
      item[ttlAttribute] = { N: String(epochSecondsOf(expiresAtMs)) };
    }
    try {
      await this.connected!.send(
        new sdk.PutItemCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: this.expressions.claim.condition,
          ExpressionAttributeNames: this.expressions.claim.names,
          ExpressionAttributeValues: { ':now': { N: String(now) } },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ).catch(this.explained);
      return null;
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
      return (error as { Item?: Item }).Item;
    }
  }

  /** The item as it is now (strongly consistent), or `undefined` when there is none. */
  private async read(sdk: DynamoDbModule, key: string): Promise<Item | undefined> {
    const { Item } = await this.connected!.send(
      new sdk.GetItemCommand({ TableName: this.tableName, Key: this.keyOf(key), ConsistentRead: true }),
    ).catch(this.explained);
    return Item;
  }

  /**
   * Completing, releasing and extending: one conditional write, `false` when its condition failed.
   * Completing and extending update the expiry (removed for `Infinity`); releasing deletes the item.
   */
  private async write(
    step: 'complete' | 'forget' | 'extend',
    key: string,
    token: string,
    ttlMs?: number,
  ): Promise<boolean> {
    const sdk = this.sdk ?? (await this.load());
    const expressions = this.expressions[step];
    const now = this.clock();
    const values: Item = {
      ':now': { N: String(now) },
      ':token': { S: token },
      ':inProgress': STATUS.inProgress,
    };
    if (step === 'complete') values[':completed'] = STATUS.completed;
    const expiresAtMs = ttlMs === undefined ? undefined : expiresAtOf(now, ttlMs);
    if (expiresAtMs !== undefined) {
      values[':exp'] = { N: String(expiresAtMs) };
      values[':ttl'] = { N: String(epochSecondsOf(expiresAtMs)) };
    }
    const input: UpdateItemCommandInput = {
      TableName: this.tableName,
      Key: this.keyOf(key),
      ConditionExpression: expressions.condition,
      ExpressionAttributeNames: expressions.names,
      ExpressionAttributeValues: values,
    };
    if (expressions.update) {
      input.UpdateExpression =
        expiresAtMs === undefined ? expressions.update.forever : expressions.update.expiring;
    }
    try {
      await this.connected!.send(
        expressions.update ? new sdk.UpdateItemCommand(input) : new sdk.DeleteItemCommand(input),
      ).catch(this.explained);
      return true;
    } catch (error) {
      if (isConditionFailed(error)) return false;
      throw error;
    }
  }

  /** Rethrows a call's error; one a missing or misshapen table causes as the start-up check names it. */
  private readonly explained = async (error: unknown): Promise<never> => {
    if (isConditionFailed(error)) throw error;
    throw await explainFailure(this.tableName, this.layout, error, () => this.describeTable());
  };

  /** The table as DynamoDB describes it: one request for the calls that fail together. */
  private async describeTable(): Promise<DescribeTableCommandOutput['Table']> {
    this.describing ??= this.connected!.send(
      new this.sdk!.DescribeTableCommand({ TableName: this.tableName }),
    )
      .then(({ Table }) => Table)
      .finally(() => (this.describing = undefined));
    return this.describing;
  }

  private keyOf(key: string): Item {
    const { partitionKey, sortKey } = this.layout;
    return sortKey
      ? { [partitionKey]: { S: key }, [sortKey.name]: { S: sortKey.value } }
      : { [partitionKey]: { S: key } };
  }

  /** Loads the SDK on first use (and creates the owned client then), so apps without this store need none. */
  private load(): Promise<DynamoDbModule> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    this.loading ??= loadDynamoDb().then((sdk) => {
      this.connected ??= new sdk.DynamoDBClient(withRecommendedConfig(this.ownedClientConfig ?? {}));
      this.sdk = sdk;
      return sdk;
    });
    return this.loading;
  }

  /** Why the store cannot be used: its own client was destroyed, or it was given no table. */
  private refusal(): Error | undefined {
    if (this.closed)
      return new IdempotencyStoreClosedError('DynamoDbIdempotencyStore', `table ${this.tableName}`);
    if (isMissingConnection(this.tableName)) {
      return missingConnectionError(
        'DynamoDbIdempotencyStore',
        `tableName ${this.tableName === '' ? "''" : String(this.tableName)}`,
        'IDEMPOTENCY_TABLE',
        'Give tableName, the name of the table (docs/stores/dynamodb.md).',
      );
    }
    return undefined;
  }
}

/** `now + ttlMs` in whole ms, `undefined` for `Infinity`. */
function expiresAtOf(now: number, ttlMs: number): number | undefined {
  const ttl = wholeTtlMs(ttlMs, 'DynamoDbIdempotencyStore');
  return ttl === undefined ? undefined : Math.ceil(now + ttl);
}

/** The TTL attribute's value: epoch seconds, rounded up so DynamoDB never deletes a live item. */
function epochSecondsOf(epochMs: number): number {
  return Math.ceil(epochMs / 1000);
}

function isConditionFailed(error: unknown): boolean {
  // By name, not instanceof: the app's copy of the SDK may not be the one this file was built with.
  return (error as { name?: unknown } | null)?.name === 'ConditionalCheckFailedException';
}

/** The recommended settings under the user's, with a request-handler options object merged too. */
function withRecommendedConfig(config: DynamoDBClientConfig): DynamoDBClientConfig {
  const handler = config.requestHandler;
  const isOptionsObject =
    handler === undefined || (typeof handler === 'object' && handler.constructor === Object);
  return {
    ...recommendedDynamoDbClientConfig,
    ...config,
    requestHandler: isOptionsObject
      ? { ...recommendedDynamoDbClientConfig.requestHandler, ...(handler as object | undefined) }
      : handler,
  };
}

/** Every attribute the item holds needs its own name. */
function checkAttributeNames(layout: ItemLayout): void {
  const names = [
    layout.partitionKey,
    ...(layout.sortKey ? [layout.sortKey.name] : []),
    layout.ttlAttribute,
    ...Object.values(ITEM_ATTRIBUTES),
  ];
  const repeated = names.filter((name, index) => names.indexOf(name) !== index);
  // Their kinds were read with the options (a name that is not a string never gets here).
  if (names.some((name) => name.length === 0) || repeated.length > 0) {
    throw new IdempotencyConfigurationError(
      `DynamoDbIdempotencyStore: the item's attribute names must be distinct non-empty strings, got ` +
        `partitionKey ${JSON.stringify(layout.partitionKey)}, sortKey ${JSON.stringify(layout.sortKey?.name)}, ` +
        `ttlAttribute ${JSON.stringify(layout.ttlAttribute)} beside the store's own ` +
        `${Object.values(ITEM_ATTRIBUTES).join(', ')}.`,
    );
  }
  if (layout.sortKey && layout.sortKey.value.length === 0) {
    throw new IdempotencyConfigurationError(
      'DynamoDbIdempotencyStore: sortKey.value must be a non-empty string.',
    );
  }
  if (layout.sortKey && Buffer.byteLength(layout.sortKey.value, 'utf8') > 1024) {
    throw new IdempotencyConfigurationError(
      `DynamoDbIdempotencyStore: sortKey.value is ${Buffer.byteLength(layout.sortKey.value, 'utf8')} bytes; ` +
        'DynamoDB takes sort keys of at most 1024 bytes. Pick a shorter value.',
    );
  }
}
