import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { DynamoDbIdempotencyStore, recommendedDynamoDbClientConfig } from '../lib/stores/dynamodb';
import { countRequests, DynaliteServer, emulateAllOldItems, RequestCounts } from '../test/support/dynalite';
import { Contender, handlerOverStore, powertoolsHandler } from './bench-redis';

/**
 * The two contenders of the DynamoDB benchmark, each handling one SQS-like payload per call with a
 * no-op handler, over its own `DynamoDBClient` with the same settings
 * (`recommendedDynamoDbClientConfig`), each with its own table on the same dynalite:
 *   (a) DynamoDbIdempotencyStore: tryAcquire, handler, markComplete (what `@Idempotent()` does);
 *   (c) Powertools idempotency: `makeIdempotent` with its `DynamoDBPersistenceLayer`, as its
 *       documentation shows.
 * Each client counts the requests it sends.
 */
export interface DynamoDbContender extends Contender {
  tableName: string;
  /** Requests sent so far, by operation. */
  requests: RequestCounts;
}

export type DynamoDbContenderId = 'a' | 'c';

/**
 * Builds a contender over a fresh client; `allOld` makes the client receive the item of a failed
 * condition as Amazon DynamoDB sends it (dynalite does not), read through a separate, uncounted client.
 */
export function dynamoDbContender(
  id: DynamoDbContenderId,
  dynamo: DynaliteServer,
  tableName: string,
  { allOld = false }: { allOld?: boolean } = {},
): DynamoDbContender {
  const client = dynamo.client(recommendedDynamoDbClientConfig);
  const reader = allOld ? dynamo.client() : undefined;
  if (reader) emulateAllOldItems(client, reader);
  const requests = countRequests(client);
  const close = async () => {
    client.destroy();
    reader?.destroy();
  };
  if (id === 'a') {
    const store = new DynamoDbIdempotencyStore({ tableName, client, checkTableOnStartup: false });
    return {
      label: 'DynamoDbIdempotencyStore',
      tableName,
      requests,
      handle: handlerOverStore(store),
      close,
    };
  }
  return {
    label: 'Powertools idempotency (DynamoDBPersistenceLayer)',
    tableName,
    requests,
    handle: powertoolsHandler(new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: client })),
    close,
  };
}
