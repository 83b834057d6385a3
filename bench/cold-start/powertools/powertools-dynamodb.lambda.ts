// Powertools on DynamoDB: its DynamoDB persistence layer with the client it creates (region,
// credentials and endpoint from the environment).
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { powertoolsHandler } from './powertools-orders';

export const handler = powertoolsHandler(
  new DynamoDBPersistenceLayer({ tableName: process.env.IDEMPOTENCY_TABLE! }),
);
