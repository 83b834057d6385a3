// The bare Nest floor on DynamoDB: a conditional put to claim, an update to complete, with the
// AWS SDK's client (region, credentials and endpoint from the environment).
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { floorHandler } from './nest-floor';

const client = new DynamoDBClient({});
const TableName = process.env.IDEMPOTENCY_TABLE!;
const keyOf = (id: string) => ({ id: { S: `${process.env.AWS_LAMBDA_FUNCTION_NAME}:order_created:${id}` } });
const seconds = (ms: number) => String(Math.ceil((Date.now() + ms) / 1000));

export const handler = floorHandler({
  async claim(id) {
    try {
      await client.send(
        new PutItemCommand({
          TableName,
          Item: { ...keyOf(id), status: { S: 'IN_PROGRESS' }, expiresAt: { N: seconds(30_000) } },
          ConditionExpression: 'attribute_not_exists(id) OR expiresAt < :now',
          ExpressionAttributeValues: { ':now': { N: seconds(0) } },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  },
  async complete(id) {
    await client.send(
      new UpdateItemCommand({
        TableName,
        Key: keyOf(id),
        UpdateExpression: 'SET #status = :done, expiresAt = :expiry',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':done': { S: 'COMPLETED' }, ':expiry': { N: seconds(86_400_000) } },
      }),
    );
  },
  async release(id) {
    await client.send(new DeleteItemCommand({ TableName, Key: keyOf(id) }));
  },
});
