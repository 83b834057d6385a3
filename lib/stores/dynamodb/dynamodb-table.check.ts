import type {
  DescribeTableCommandOutput,
  DescribeTimeToLiveCommandOutput,
  KeySchemaElement,
} from '@aws-sdk/client-dynamodb';
import { IdempotencyConfigurationError } from '../../common/sqs-idempotency.error';
import type { ItemLayout } from './dynamodb-idempotency.item';

/**
 * What the store says of a table that cannot hold its items: missing, or keyed otherwise than the
 * options say, it fails every call, so the error names the table and the fix. By default the store
 * looks only when a call fails the way such a table makes it fail (`explainFailure`), so a start sends
 * no request; `checkTableOnStartup` looks at start-up (`checkTable`): it stops the deployment, and warns
 * of a TTL on another attribute. An unanswered check only warns.
 */

/** The table the store was given cannot hold its items, or the store may not look at it. `code`: `'DYNAMODB_TABLE_UNUSABLE'`. */
export class DynamoDbIdempotencyTableError extends IdempotencyConfigurationError {
  override readonly code: string = 'DYNAMODB_TABLE_UNUSABLE';

  constructor(
    readonly tableName: string,
    readonly problem: string,
    readonly fix: string,
    override readonly cause?: unknown,
  ) {
    super(`DynamoDbIdempotencyStore: table "${tableName}" ${problem}. ${fix}`);
  }
}

/** The two AWS CLI lines that create a table for `layout` and turn its TTL on. */
function createTableCommands(tableName: string, layout: ItemLayout): string {
  const keys = [{ name: layout.partitionKey, type: 'HASH' }];
  if (layout.sortKey) keys.push({ name: layout.sortKey.name, type: 'RANGE' });
  return (
    `aws dynamodb create-table --table-name ${tableName} ` +
    `--attribute-definitions ${keys.map((key) => `AttributeName=${key.name},AttributeType=S`).join(' ')} ` +
    `--key-schema ${keys.map((key) => `AttributeName=${key.name},KeyType=${key.type}`).join(' ')} ` +
    `--billing-mode PAY_PER_REQUEST && ${turnOnTtlCommand(tableName, layout)}`
  );
}

function turnOnTtlCommand(tableName: string, layout: ItemLayout): string {
  return (
    `aws dynamodb update-time-to-live --table-name ${tableName} ` +
    `--time-to-live-specification Enabled=true,AttributeName=${layout.ttlAttribute}`
  );
}

/** What `DescribeTable` and `DescribeTimeToLive` answered (a rejection, or the output). */
export interface TableDescription {
  table: PromiseSettledResult<Pick<DescribeTableCommandOutput, 'Table'>>;
  timeToLive: PromiseSettledResult<Pick<DescribeTimeToLiveCommandOutput, 'TimeToLiveDescription'>>;
}

/** Throws for a table that cannot work; returns the warnings to log. */
export function checkTable(tableName: string, layout: ItemLayout, found: TableDescription): string[] {
  if (found.table.status === 'rejected') {
    const error = found.table.reason as { name?: string; message?: string };
    if (error?.name === 'ResourceNotFoundException') throw missingTableError(tableName, layout, error);
    if (error?.name === 'AccessDeniedException') {
      throw new DynamoDbIdempotencyTableError(
        tableName,
        `cannot be described (${error.message})`,
        'Allow dynamodb:DescribeTable on it, or set checkTableOnStartup: false to skip this check.',
        error,
      );
    }
    return [
      `Could not check table "${tableName}" at start-up (${describe(error)}); starting anyway. ` +
        'Records fail closed (onStoreError) until DynamoDB answers.',
    ];
  }
  const mismatch = keySchemaError(tableName, layout, found.table.value.Table);
  if (mismatch) throw mismatch;
  return timeToLiveWarnings(tableName, layout, found.timeToLive);
}

/**
 * The error to raise for a call's `error`: a missing table, or one keyed otherwise (a `ValidationException`
 * about the key: then the table is described, once for the calls failing together), said as the start-up
 * check says it, the call's error as `cause`; any other error as it came.
 */
export async function explainFailure(
  tableName: string,
  layout: ItemLayout,
  error: unknown,
  describe: () => Promise<DescribeTableCommandOutput['Table']>,
): Promise<unknown> {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'ResourceNotFoundException') return missingTableError(tableName, layout, error);
  if (name !== 'ValidationException') return error;
  const table = await describe().catch(() => undefined);
  return (table && keySchemaError(tableName, layout, table, error)) ?? error;
}

function missingTableError(
  tableName: string,
  layout: ItemLayout,
  cause: unknown,
): DynamoDbIdempotencyTableError {
  return new DynamoDbIdempotencyTableError(
    tableName,
    'does not exist (in the region and account the client uses)',
    `Create it: ${createTableCommands(tableName, layout)}`,
    cause,
  );
}

/** The error for a table keyed otherwise than `layout` says, with the fix; `undefined` when it matches. */
function keySchemaError(
  tableName: string,
  layout: ItemLayout,
  table: DescribeTableCommandOutput['Table'] = {},
  cause?: unknown,
): DynamoDbIdempotencyTableError | undefined {
  const typeOf = (name: string) =>
    table.AttributeDefinitions?.find((definition) => definition.AttributeName === name)?.AttributeType;
  const keyOf = (type: KeySchemaElement['KeyType']) =>
    table.KeySchema?.find((element) => element.KeyType === type)?.AttributeName;
  const hash = keyOf('HASH');
  const range = keyOf('RANGE');
  let fix: string;
  if (hash !== layout.partitionKey) {
    fix = `Set partitionKey: '${hash}' in the store's options if that is the table you mean.`;
  } else if (layout.sortKey && range !== layout.sortKey.name) {
    fix = range
      ? `Set sortKey: { name: '${range}', value: ... } in the store's options.`
      : "Remove sortKey from the store's options.";
  } else if (!layout.sortKey && range) {
    fix = `Set sortKey: { name: '${range}', value: 'idempotency' } (any fixed string) in the store's options.`;
  } else if ([hash, range].some((name) => name && typeOf(name) !== 'S')) {
    fix = 'The store keeps string keys: use a table whose key attributes are of type S.';
  } else return undefined;
  const expected = layout.sortKey
    ? `partition key "${layout.partitionKey}" and sort key "${layout.sortKey.name}"`
    : `partition key "${layout.partitionKey}" and no sort key`;
  const has = `${hash ? `partition key "${hash}" (${typeOf(hash)})` : 'no partition key'}${range ? ` and sort key "${range}" (${typeOf(range)})` : ' and no sort key'}`;
  return new DynamoDbIdempotencyTableError(
    tableName,
    `has ${has}; the store writes ${expected}, strings (S)`,
    `${fix} Or create a table for the current options: ${createTableCommands(tableName, layout)}`,
    cause,
  );
}

function timeToLiveWarnings(
  tableName: string,
  layout: ItemLayout,
  timeToLive: TableDescription['timeToLive'],
): string[] {
  // Not allowed to look, or not supported (local emulators): nothing to say.
  if (timeToLive.status === 'rejected') return [];
  const { TimeToLiveStatus: status, AttributeName: attribute } = timeToLive.value.TimeToLiveDescription ?? {};
  const on = status === 'ENABLED' || status === 'ENABLING';
  if (on && attribute === layout.ttlAttribute) return [];
  const consequence =
    'expired idempotency items are never deleted (they still count as expired, but the table keeps growing)';
  if (on) {
    // A table has one TTL attribute: point the store at it rather than move it.
    return [
      `TTL of table "${tableName}" is on attribute "${attribute}", not on "${layout.ttlAttribute}": ${consequence}. ` +
        `Set ttlAttribute: '${attribute}' in the store's options.`,
    ];
  }
  return [
    `TTL of table "${tableName}" is ${(status ?? 'disabled').toLowerCase()}: ${consequence}. ` +
      `Turn it on: ${turnOnTtlCommand(tableName, layout)}`,
  ];
}

function describe(error: unknown): string {
  const { name, message } = (error ?? {}) as { name?: string; message?: string };
  return [name, message].filter(Boolean).join(': ') || String(error);
}
