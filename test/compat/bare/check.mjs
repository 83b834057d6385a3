// `import` side: the ES build loads and runs a Lambda batch with no optional peer installed.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import checks from './check-app.cjs';

const entry = fileURLToPath(import.meta.resolve('nestjs-idempotent-sqs'));
assert.match(entry, /nestjs-idempotent-sqs[\\/]dist[\\/]esm[\\/]index\.js$/, `import resolved ${entry}`);
assert.match(import.meta.resolve('nestjs-idempotent-sqs/testing'), /dist\/esm\/testing\/index\.js$/);
assert.match(import.meta.resolve('nestjs-idempotent-sqs/redis'), /dist\/esm\/stores\/redis\/index\.js$/);
assert.match(
  import.meta.resolve('nestjs-idempotent-sqs/dynamodb'),
  /dist\/esm\/stores\/dynamodb\/index\.js$/,
);
assert.match(
  import.meta.resolve('nestjs-idempotent-sqs/postgres'),
  /dist\/esm\/stores\/postgres\/index\.js$/,
);
for (const [subpath, file] of [
  ['center', 'center/index'],
  ['stores', 'stores/index'],
  ['types', 'types'],
]) {
  const resolved = import.meta.resolve(`nestjs-idempotent-sqs/${subpath}`);
  assert.ok(resolved.endsWith(`/dist/esm/${file}.js`), `${subpath} resolved ${resolved}`);
  await import(`nestjs-idempotent-sqs/${subpath}`); // loads with no optional peer installed
}
// Resolved from inside the installed package, where its own lazy loads would look.
checks.assertPeersAbsent(createRequire(entry).resolve);

await checks.runLambda({
  common: await import('@nestjs/common'),
  validator: await import('class-validator'),
  lib: await import('nestjs-idempotent-sqs'),
  testing: await import('nestjs-idempotent-sqs/testing'),
});
await checks.assertPollingNeedsItsPeers({
  common: await import('@nestjs/common'),
  core: await import('@nestjs/core'),
  lib: await import('nestjs-idempotent-sqs'),
});
await checks.assertDynamoDbNeedsItsPeer({
  lib: await import('nestjs-idempotent-sqs'),
  dynamodb: await import('nestjs-idempotent-sqs/dynamodb'),
});
await checks.assertPostgresNeedsPg({
  lib: await import('nestjs-idempotent-sqs'),
  postgres: await import('nestjs-idempotent-sqs/postgres'),
});
console.log(`bare app, import (ES build) on Node ${process.versions.node}: ok`);
