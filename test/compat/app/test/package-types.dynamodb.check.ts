// Compiled, never run: the declarations of the dynamodb entry, with skipLibCheck off, in the apps that
// install @aws-sdk/client-dynamodb (the bare app does not).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { IdempotencyStore } from 'nestjs-idempotent-sqs';
import type { DynamoDbIdempotencyStoreOptions } from 'nestjs-idempotent-sqs/dynamodb';
import {
  DynamoDbIdempotencyStore,
  DynamoDbIdempotencyTableError,
  recommendedDynamoDbClientConfig,
} from 'nestjs-idempotent-sqs/dynamodb';

const client = new DynamoDBClient({ ...recommendedDynamoDbClientConfig, region: 'eu-west-1' });
export const options: DynamoDbIdempotencyStoreOptions = {
  tableName: 'idempotency',
  client,
  sortKey: { name: 'sk', value: 'idempotency' },
};
export const store: IdempotencyStore = new DynamoDbIdempotencyStore(options);
export const owned: IdempotencyStore = new DynamoDbIdempotencyStore({
  tableName: 'idempotency',
  clientConfig: { region: 'eu-west-1', requestHandler: { requestTimeout: 1_000 } },
});
export const errorClass: typeof DynamoDbIdempotencyTableError = DynamoDbIdempotencyTableError;
