// `require` side: the CommonJS build loads and runs a Lambda batch with no optional peer installed.
'use strict';
const assert = require('node:assert/strict');
const { createRequire } = require('node:module');
const {
  assertDynamoDbNeedsItsPeer,
  assertPeersAbsent,
  assertPollingNeedsItsPeers,
  assertPostgresNeedsPg,
  runLambda,
} = require('./check-app.cjs');

async function main() {
  const entry = require.resolve('nestjs-idempotent-sqs');
  assert.match(entry, /nestjs-idempotent-sqs[\\/]dist[\\/]cjs[\\/]index\.js$/, `require resolved ${entry}`);
  assert.match(require.resolve('nestjs-idempotent-sqs/testing'), /dist[\\/]cjs[\\/]testing[\\/]index\.js$/);
  assert.match(
    require.resolve('nestjs-idempotent-sqs/redis'),
    /dist[\\/]cjs[\\/]stores[\\/]redis[\\/]index\.js$/,
  );
  assert.match(
    require.resolve('nestjs-idempotent-sqs/dynamodb'),
    /dist[\\/]cjs[\\/]stores[\\/]dynamodb[\\/]index\.js$/,
  );
  assert.match(
    require.resolve('nestjs-idempotent-sqs/postgres'),
    /dist[\\/]cjs[\\/]stores[\\/]postgres[\\/]index\.js$/,
  );
  for (const [subpath, file] of [
    ['center', 'center/index'],
    ['stores', 'stores/index'],
    ['types', 'types'],
  ]) {
    const resolved = require.resolve(`nestjs-idempotent-sqs/${subpath}`).split('\\').join('/');
    assert.ok(resolved.endsWith(`/dist/cjs/${file}.js`), `${subpath} resolved ${resolved}`);
    require(`nestjs-idempotent-sqs/${subpath}`); // loads with no optional peer installed
  }
  // Resolved from inside the installed package, where its own lazy loads would look.
  assertPeersAbsent(createRequire(entry).resolve);
  await runLambda({
    common: require('@nestjs/common'),
    validator: require('class-validator'),
    lib: require('nestjs-idempotent-sqs'),
    testing: require('nestjs-idempotent-sqs/testing'),
  });
  await assertPollingNeedsItsPeers({
    common: require('@nestjs/common'),
    core: require('@nestjs/core'),
    lib: require('nestjs-idempotent-sqs'),
  });
  await assertDynamoDbNeedsItsPeer({
    lib: require('nestjs-idempotent-sqs'),
    dynamodb: require('nestjs-idempotent-sqs/dynamodb'),
  });
  await assertPostgresNeedsPg({
    lib: require('nestjs-idempotent-sqs'),
    postgres: require('nestjs-idempotent-sqs/postgres'),
  });
  console.log(`bare app, require (CommonJS build) on Node ${process.versions.node}: ok`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
