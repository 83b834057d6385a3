// What both checks assert, given the package (main and testing entries) as one module system loaded it.
'use strict';
const assert = require('node:assert/strict');
const createOrdersLambda = require('./orders-app.cjs');

/** The optional peers: none of them may be resolvable here, or the check proves nothing. */
const OPTIONAL_PEERS = [
  'ioredis',
  'sqs-consumer',
  '@aws-sdk/client-sqs',
  '@aws-sdk/client-dynamodb',
  '@opentelemetry/api',
  '@nestjs/microservices',
  'pg',
];

exports.assertPeersAbsent = function assertPeersAbsent(resolveFromPackage) {
  for (const name of OPTIONAL_PEERS) {
    assert.throws(
      () => resolveFromPackage(name),
      (error) => error.code === 'MODULE_NOT_FOUND' || error.code === 'ERR_MODULE_NOT_FOUND',
      `${name} is installed in the bare app: npm installed an optional peer, so this check would prove nothing`,
    );
  }
};

exports.runLambda = async function runLambda({ common, validator, lib, testing }) {
  const { handler, shipped } = createOrdersLambda({ common, validator, lib });
  const order = (id) => ({ type: 'order_placed', id, orderId: `o-${id}` });
  const first = testing.buildSqsRecord(order('e-1'), { queue: 'orders' });
  const bad = testing.buildSqsRecord({ type: 'order_placed', id: 'e-2' }, { queue: 'orders' });
  const retry = testing.buildSqsRecord(order('e-1'), { queue: 'orders' });
  try {
    const one = await handler(testing.buildSqsEvent([first, bad]), testing.buildLambdaContext());
    const two = await handler(testing.buildSqsEvent([retry]), testing.buildLambdaContext());
    assert.deepEqual(one, { batchItemFailures: [{ itemIdentifier: bad.messageId }] });
    assert.deepEqual(two, { batchItemFailures: [] });
    assert.deepEqual(shipped, ['o-e-1']);
  } finally {
    await handler.close();
  }
};

/**
 * A feature whose peer is missing fails with a sentence naming the feature, the package and the
 * install line: here SqsModule polling without @aws-sdk/client-sqs and sqs-consumer.
 */
exports.assertPollingNeedsItsPeers = async function assertPollingNeedsItsPeers({ common, core, lib }) {
  class PollingModule {}
  Reflect.decorate(
    [
      common.Module({
        imports: [
          lib.IdempotencyModule.forRoot({}),
          lib.SqsModule.forRoot({
            queues: [{ name: 'orders', url: 'http://127.0.0.1:9/000000000000/orders' }],
          }),
        ],
      }),
    ],
    PollingModule,
  );
  await assert.rejects(
    core.NestFactory.createApplicationContext(PollingModule, { logger: false, abortOnError: false }),
    (error) =>
      error instanceof lib.MissingPeerDependencyError &&
      error.message.includes('SqsModule polling needs the package "@aws-sdk/client-sqs"') &&
      error.message.includes('npm install @aws-sdk/client-sqs'),
  );
};

/**
 * The DynamoDB entry loads without its peer (the SDK is loaded on the store's first command), and the
 * store then fails with the sentence naming the package and the install line.
 */
exports.assertDynamoDbNeedsItsPeer = async function assertDynamoDbNeedsItsPeer({ lib, dynamodb }) {
  const store = new dynamodb.DynamoDbIdempotencyStore({ tableName: 'idempotency' });
  assert.equal(store.shared, true);
  await assert.rejects(
    store.tryAcquire('idempotency:order_placed:e-1', 60_000, 'token'),
    (error) =>
      error instanceof lib.MissingPeerDependencyError &&
      error.message.includes('DynamoDbIdempotencyStore needs the package "@aws-sdk/client-dynamodb"') &&
      error.message.includes('npm install @aws-sdk/client-dynamodb'),
  );
};

/**
 * The Postgres entry loads without pg (its types and code need none until a pool is created), and a
 * store asked to create its own pool fails its first claim with the sentence naming pg.
 */
exports.assertPostgresNeedsPg = async function assertPostgresNeedsPg({ lib, postgres }) {
  const store = new postgres.PostgresIdempotencyStore('postgres://app@127.0.0.1:9/orders', {
    sweeper: false,
  });
  assert.equal(store.shared, true);
  await assert.rejects(
    store.tryAcquire('k', 1_000, 't'),
    (error) =>
      error instanceof lib.MissingPeerDependencyError &&
      error.message.includes(
        'PostgresIdempotencyStore (connecting from a connection string or options) needs the package "pg"',
      ) &&
      error.message.includes('npm install pg'),
  );
  await store.close();
};
