// Powertools' side of the same record, as its documentation composes batch processing and
// idempotency: `processPartialResponse` + `BatchProcessor`, each body `JSON.parse`d and checked by a
// zod schema (as ours is validated before its claim), then `makeIdempotent` (key `id`) on the
// persistence layer given, around the same service work.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { z } from 'zod';

const OrderCreated = z.object({
  type: z.literal('order_created'),
  id: z.string(),
  orderId: z.string(),
  amount: z.number().int().min(1),
});

const shipped: string[] = [];

export function powertoolsHandler(persistenceStore: BasePersistenceLayer, ready?: Promise<unknown>) {
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'id', expiresAfterSeconds: 86_400 });
  const processOrder = makeIdempotent(
    async (order: z.infer<typeof OrderCreated>) => {
      if (!shipped.includes(order.orderId)) shipped.push(order.orderId);
    },
    { persistenceStore, config },
  );
  const processor = new BatchProcessor(EventType.SQS);
  const recordHandler = (record: SQSRecord) => processOrder(OrderCreated.parse(JSON.parse(record.body)));
  return async (event: SQSEvent, context: Context) => {
    await ready;
    config.registerLambdaContext(context);
    return processPartialResponse(event, recordHandler, processor, { context });
  };
}
