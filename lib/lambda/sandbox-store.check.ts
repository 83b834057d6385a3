import type { INestApplicationContext } from '@nestjs/common';
import { IdempotencyStore, isSharedStore } from '../stores/idempotency-store.interface';

/**
 * Lambda runs many sandboxes side by side and replaces them at will: a store that keeps its keys in
 * the process (the in-memory default, `shared: false`) dedups only the records one sandbox sees, so
 * a duplicate delivered to another sandbox, or after a cold start, runs its handler again. Said once
 * at boot, in a Lambda sandbox only (`AWS_LAMBDA_FUNCTION_NAME` is set by its runtime): a test that
 * invokes the handler locally is not told about a store it uses on purpose.
 */
export function sandboxOnlyStore(
  app: Pick<INestApplicationContext, 'get'>,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (!env.AWS_LAMBDA_FUNCTION_NAME) return undefined;
  let store: IdempotencyStore;
  try {
    store = app.get<IdempotencyStore>(IdempotencyStore, { strict: false });
  } catch {
    return undefined; // no IdempotencyModule: no dedup to speak of
  }
  if (isSharedStore(store)) return undefined;
  return (
    `The idempotency store ${store.constructor.name} keeps its keys in this Lambda sandbox only: a duplicate ` +
    'delivered to another sandbox (concurrent invocations, or after a cold start) runs its handler again. ' +
    'Give IdempotencyModule a shared store (DynamoDbIdempotencyStore, RedisIdempotencyStore or ' +
    'PostgresIdempotencyStore): docs/hosts/lambda.md, "Bundling and deploying".'
  );
}
