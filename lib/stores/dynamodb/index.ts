/**
 * `nestjs-idempotent-sqs/dynamodb`: the DynamoDB store (`@aws-sdk/client-dynamodb` is loaded on its first command).
 *
 * @module nestjs-idempotent-sqs/dynamodb
 */
export { DynamoDbIdempotencyStore, recommendedDynamoDbClientConfig } from './dynamodb-idempotency.store';
export type {
  DynamoDbIdempotencyClient,
  DynamoDbIdempotencyStoreOptions,
} from './dynamodb-idempotency.store';
export { DynamoDbIdempotencyTableError } from './dynamodb-table.check';
