/**
 * `nestjs-idempotent-sqs/dynamodb`: the DynamoDB idempotency store. A separate entry point, as
 * Powertools puts its persistence backends on subpaths: apps that do not use DynamoDB never load
 * this code, and `@aws-sdk/client-dynamodb` (an optional peer) is loaded only when the store sends
 * its first command.
 */
export { DynamoDbIdempotencyStore } from './dynamodb-idempotency.store';
export { recommendedDynamoDbClientConfig } from './dynamodb-idempotency-store.options';
export type {
  DynamoDbIdempotencyClient,
  DynamoDbIdempotencyStoreOptions,
} from './dynamodb-idempotency-store.options';
export { DynamoDbIdempotencyTableError } from './dynamodb-table.check';
