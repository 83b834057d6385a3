// The bare Nest floor on Redis: a claim by hand with ioredis, `SET key token NX PX lease`, then
// `SET key 1 PX ttl` (no fencing, as the raw loop of the Redis benchmark).
import { Redis } from 'ioredis';
import { floorHandler } from './nest-floor';

const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
const keyOf = (id: string) => `idempotency:${process.env.AWS_LAMBDA_FUNCTION_NAME}:order_created:${id}`;

export const handler = floorHandler({
  claim: async (id) => (await redis.set(keyOf(id), String(Math.random()), 'PX', 30_000, 'NX')) !== null,
  complete: async (id) => void (await redis.set(keyOf(id), '1', 'PX', 86_400_000)),
  release: async (id) => void (await redis.del(keyOf(id))),
});
