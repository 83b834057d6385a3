// Runs the bundle the Lambda guide's recipe made (docs/hosts/lambda.md, "Bundling and deploying") as
// the Lambda runtime would: alone in a folder outside any node_modules (as in /var/task), its
// `handler` invoked with SQS events. Usage: node lambda-bundle.check.cjs <index.js> [lost-metadata]
//   (default)      a valid and an invalid record: the partial batch response names the invalid one;
//                  then a copy of the valid one: acked as a duplicate;
//   lost-metadata  a bundle built from the TypeScript sources by esbuild alone: the handler refuses
//                  to start, saying why in one sentence.
'use strict';
const assert = require('node:assert/strict');
const { copyFileSync, mkdtempSync, statSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const [bundle, expectation = 'works'] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'lambda-bundle-'));
copyFileSync(bundle, join(dir, 'index.js'));

const printed = [];
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => {
  printed.push(String(chunk));
  return write(chunk, ...rest);
};

const record = (messageId, body) => ({
  messageId,
  receiptHandle: `receipt-${messageId}`,
  body: JSON.stringify(body),
  attributes: {
    ApproximateReceiveCount: '1',
    SentTimestamp: '1700000000000',
    SenderId: 'AIDA',
    ApproximateFirstReceiveTimestamp: '1700000000000',
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:orders',
  awsRegion: 'us-east-1',
});
const context = { functionName: 'orders', awsRequestId: 'request-1', getRemainingTimeInMillis: () => 30_000 };
const order = { type: 'order_created', id: 'evt-1', orderId: 'o-1', amount: 2 };

async function main() {
  const { handler } = require(join(dir, 'index.js'));
  if (expectation === 'lost-metadata') {
    await assert.rejects(
      handler({ Records: [record('m-1', order)] }, context),
      /^SqsConfigurationError: OrdersHandler was constructed without its 1 constructor dependency, because its class carries no decorator metadata/,
    );
    return 'a bundle without decorator metadata refuses to start, naming OrdersHandler';
  }
  const invalid = { ...order, id: 'evt-2', amount: 'two' };
  assert.deepEqual(await handler({ Records: [record('m-1', order), record('m-2', invalid)] }, context), {
    batchItemFailures: [{ itemIdentifier: 'm-2' }],
  });
  assert.deepEqual(await handler({ Records: [record('m-3', order)] }, context), { batchItemFailures: [] });
  assert.ok(
    printed.some((line) => line.includes('status=DUPLICATE') && line.includes('messageId=m-3')),
    'the copy of evt-1 is logged as a duplicate',
  );
  return `the bundle (${Math.round(statSync(bundle).size / 1024)} KB) answered a partial batch response and acked a duplicate`;
}

main().then(
  (what) => {
    console.log(`Lambda bundle under Node ${process.versions.node}: ${what}`);
    process.exit(0);
  },
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
