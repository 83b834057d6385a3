/**
 * `nestjs-idempotent-sqs/redis`: the Redis idempotency store and the Redis store of the Idempotency
 * Center's shared counters, over `ioredis` (an optional peer dependency loaded only when a store
 * builds its own client). A separate entry point, as the DynamoDB and Postgres stores and
 * Powertools' persistence backends are: apps that do not use Redis never load this code.
 *
 * @example
 * ```ts
 * import { IdempotencyModule } from 'nestjs-idempotent-sqs';
 * import { RedisIdempotencyStore } from 'nestjs-idempotent-sqs/redis';
 *
 * IdempotencyModule.forRoot({ store: new RedisIdempotencyStore(process.env.REDIS_URL!), service: 'orders' });
 * ```
 */
export { RedisIdempotencyStore, recommendedIoRedisOptions } from './redis-idempotency.store';
export type {
  IoRedisOptions,
  RedisIdempotencyStoreOptions,
  RedisScriptClient,
  RedisServerCheck,
} from './redis-idempotency.store';
export { RedisIdempotencyStatsStore } from '../../observability/redis-idempotency-stats.store';
export type {
  RedisHashClient,
  RedisIdempotencyStatsStoreOptions,
  RedisStatsPipeline,
} from '../../observability/redis-idempotency-stats.store';
