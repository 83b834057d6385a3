import { randomUUID } from 'node:crypto';
import { FingerprintClaim } from '../lib/stores';
import { InMemoryIdempotencyStore } from '../lib';
import { storeKeyOf, storeKeyPrefixOf } from '../lib/idempotency/store-key';
import { median } from './bench-harness';
import { newPayload, OrderPayload } from './bench-redis';

/**
 * Heap per completed key of `InMemoryIdempotencyStore`: `heapUsed` after a full GC, before and after
 * completing `keys` fresh keys as `@Idempotent()` does (claim with a fresh token, complete), divided
 * by `keys`. The key strings are counted: the store keeps the one it was given, built per message
 * as in an app: the `id` of a JSON-parsed SQS body behind the handler's prefix. Tokens are not: a
 * completed key no longer holds its token. Needs `node --expose-gc` (`npm run bench` passes it).
 * With `claimOf`, each key is claimed with the payload's fingerprint, as a handler with a
 * `fingerprint` option claims it (the message id, when there is one, is a fresh string per message,
 * garbage once handled, as an SQS record's is).
 */
export async function heapBytesPerCompletedKey({
  keys,
  samples,
  claimOf,
}: {
  keys: number;
  samples: number;
  claimOf?: (payload: OrderPayload) => FingerprintClaim;
}): Promise<{ median: number; samples: number[]; exampleKey: string }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('heapBytesPerCompletedKey needs node --expose-gc');
  const values: number[] = [];
  let exampleKey = '';
  // What the module builds for order_created with the default keyPrefix: no service segment in memory.
  const prefix = storeKeyPrefixOf('idempotency', undefined, 'order_created');
  for (let sample = 0; sample < samples; sample++) {
    // No expiry, no eviction during the measurement: every key stays, none is swept.
    const store = new InMemoryIdempotencyStore({ maxKeys: Infinity });
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < keys; i++) {
      const body = JSON.stringify(newPayload()); // garbage once the message is handled, as in an app
      const payload = JSON.parse(body) as OrderPayload;
      const key = storeKeyOf(prefix, payload.id);
      const token = randomUUID();
      if (claimOf) await store.tryAcquire(key, 300_000, token, claimOf(payload));
      else await store.tryAcquire(key, 300_000, token);
      await store.markComplete(key, 86_400_000, token);
      if (i === 0) exampleKey = key;
    }
    gc();
    const after = process.memoryUsage().heapUsed;
    if (store.size !== keys) throw new Error(`expected ${keys} keys, the store holds ${store.size}`);
    values.push((after - before) / keys);
  }
  return { median: median(values), samples: values, exampleKey };
}
