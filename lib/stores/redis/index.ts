/**
 * `nestjs-idempotent-sqs/redis`: the Redis idempotency store and the Center's Redis stats store, over
 * `ioredis` (an optional peer, loaded only when a store builds its own client).
 *
 * @example
 * ```ts
 * // One store per app: the factory runs for each (tests' apps too); the store closes with its app.
 * IdempotencyModule.forRootAsync({
 *   useFactory: () => ({ store: new RedisIdempotencyStore(process.env.REDIS_URL!), service: 'orders' }),
 * });
 * ```
 *
 * @module nestjs-idempotent-sqs/redis
 */
export { RedisIdempotencyStore } from './redis-idempotency.store';
export { recommendedIoRedisOptions } from './redis-connection';
export type {
  IoRedisOptions,
  RedisIdempotencyStoreOptions,
  RedisScriptClient,
  RedisServerCheck,
} from './redis-connection';
export { RedisIdempotencyStatsStore } from '../../observability/redis-idempotency-stats.store';
export type {
  RedisHashClient,
  RedisIdempotencyStatsStoreOptions,
  RedisStatsPipeline,
} from '../../observability/redis-idempotency-stats.store';
