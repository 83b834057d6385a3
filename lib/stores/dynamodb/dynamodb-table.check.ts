import type {
  DescribeTableCommandOutput,
  DescribeTimeToLiveCommandOutput,
  KeySchemaElement,
} from '@aws-sdk/client-dynamodb';
import { IdempotencyConfigurationError } from '../../common/sqs-idempotency.error';
import type { ItemLayout } from './dynamodb-idempotency.item';

/**
 * The start-up check of the table: missing or keyed otherwise than the options say would fail every
 * record, so it stops the deployment with the fix; an unanswered check only warns.
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
  const create = createTableCommands(tableName, layout);
  if (found.table.status === 'rejected') {
    const error = found.table.reason as { name?: string; message?: string };
    if (error?.name === 'ResourceNotFoundException') {
      throw new DynamoDbIdempotencyTableError(
        tableName,
        'does not exist (in the region and account the client uses)',
        `Create it: ${create}`,
        error,
      );
    }
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
  const problem = keySchemaProblem(layout, found.table.value.Table ?? {});
  if (problem) {
    throw new DynamoDbIdempotencyTableError(
      tableName,
      problem.what,
      `${problem.fix} Or create a table for the current options: ${create}`,
    );
  }
  return timeToLiveWarnings(tableName, layout, found.timeToLive);
}

function keySchemaProblem(
  layout: ItemLayout,
  table: NonNullable<DescribeTableCommandOutput['Table']>,
): { what: string; fix: string } | undefined {
  const typeOf = (name: string) =>
    table.AttributeDefinitions?.find((definition) => definition.AttributeName === name)?.AttributeType;
  const keyOf = (type: KeySchemaElement['KeyType']) =>
    table.KeySchema?.find((element) => element.KeyType === type)?.AttributeName;
  const hash = keyOf('HASH');
  const range = keyOf('RANGE');
  const expected = layout.sortKey
    ? `partition key "${layout.partitionKey}" and sort key "${layout.sortKey.name}"`
    : `partition key "${layout.partitionKey}" and no sort key`;
  const has = `${hash ? `partition key "${hash}" (${typeOf(hash)})` : 'no partition key'}${range ? ` and sort key "${range}" (${typeOf(range)})` : ' and no sort key'}`;
  const what = `has ${has}; the store writes ${expected}, strings (S)`;

  if (hash !== layout.partitionKey) {
    return { what, fix: `Set partitionKey: '${hash}' in the store's options if that is the table you mean.` };
  }
  if (layout.sortKey && range !== layout.sortKey.name) {
    return {
      what,
      fix: range
        ? `Set sortKey: { name: '${range}', value: ... } in the store's options.`
        : "Remove sortKey from the store's options.",
    };
  }
  if (!layout.sortKey && range) {
    return {
      what,
      fix: `Set sortKey: { name: '${range}', value: 'idempotency' } (any fixed string) in the store's options.`,
    };
  }
  const notString = [hash, range].filter((name): name is string => !!name && typeOf(name) !== 'S');
  if (notString.length > 0) {
    return { what, fix: 'The store keeps string keys: use a table whose key attributes are of type S.' };
  }
  return undefined;
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
