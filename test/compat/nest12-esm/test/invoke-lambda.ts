// Node itself (no Jest loader in between) runs the compiled Lambda entry point, as the Lambda
// runtime would: `node build/test/invoke-lambda.js`.
import assert from 'node:assert/strict';
import { buildLambdaContext, buildSqsEvent, buildSqsRecord } from 'nestjs-idempotent-sqs/testing';
import { handler } from '../src/lambda.js';
import { OrdersHandler } from '../src/orders.handler.js';

const order = { type: 'order_placed', id: 'evt-1', orderId: 'o-1', amount: 2 };
const first = buildSqsRecord(order, { queue: 'orders' });
const invalid = buildSqsRecord({ ...order, id: 'evt-2', amount: 'two' }, { queue: 'orders' });
const retry = buildSqsRecord(order, { queue: 'orders' });

assert.deepEqual(await handler(buildSqsEvent([first, invalid]), buildLambdaContext()), {
  batchItemFailures: [{ itemIdentifier: invalid.messageId }],
});
assert.deepEqual(await handler(buildSqsEvent([retry]), buildLambdaContext()), { batchItemFailures: [] });
const app = await handler.getApp();
assert.deepEqual(
  app.get(OrdersHandler).shipped.map((entry) => entry.orderId),
  ['o-1'],
);
await handler.close();
console.log(`Lambda handler under plain Node ${process.versions.node} (ES modules): ok`);
