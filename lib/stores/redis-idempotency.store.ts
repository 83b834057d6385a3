import type { OnApplicationShutdown } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { AcquireResult, IdempotencyStore } from './idempotency-store.interface';
import {
  ACQUIRE,
  ACQUIRE_ANSWERS,
  COMPLETE,
  COMPLETED_VALUE,
  EXTEND,
  FORGET,
  LuaScript,
} from './redis-idempotency.scripts';

/**
 * Shares dedup state between instances through Redis (or Valkey), over `ioredis`.
 *
 * Why it looks the way it does:
 * - Each method is one round trip: a Lua script decides and writes atomically, so two workers can
 *   never both claim a key and no read-then-write race exists. Scripts go by SHA (EVALSHA); a server
 *   that does not know one (first use, restart, SCRIPT FLUSH) gets it once in full (EVAL).
 *   The client is used as it is: the store adds no commands to it.
 * - Fencing: the claim holds the attempt's token; completing, releasing and extending act only while
 *   it still does, and answer `false` otherwise.
 * - Expiry is Redis's own `PX`, so no clocks are compared between hosts.
 * - A completed key holds `"1"` (no JSON), and `compactKeys` shrinks the name too.
 * - Every script touches one key, so it runs unchanged on Redis Cluster.
 *
 * ioredis stays an optional peer dependency: only this file mentions it, by type, and it is loaded
 * at run time only when the store creates its own connection.
 *
 * @example
 * ```ts
 * // A client you own (and close):
 * const redis = new Redis(process.env.REDIS_URL!, recommendedIoRedisOptions);
 * IdempotencyModule.forRoot({ store: new RedisIdempotencyStore(redis) });
 *
 * // Or a connection the store owns and closes on application shutdown:
 * IdempotencyModule.forRoot({ store: new RedisIdempotencyStore(process.env.REDIS_URL!) });
 * ```
 */
export class RedisIdempotencyStore implements IdempotencyStore, OnApplicationShutdown {
  /** The ioredis client the store talks through (yours, or the one it created). */
  readonly client: Redis | Cluster;
  private readonly ownsClient: boolean;
  private readonly compactKeys: boolean;

  /**
   * @param connection a `Redis` or `Cluster` instance you own, or a `redis://` URL or ioredis
   *   options from which the store creates (lazily connects, and on shutdown closes) its own client
   *   with {@link recommendedIoRedisOptions} applied under yours.
   */
  constructor(
    connection: Redis | Cluster | string | RedisOptions,
    options: RedisIdempotencyStoreOptions = {},
  ) {
    if (isIoRedisClient(connection)) {
      this.client = connection;
      this.ownsClient = false;
    } else {
      this.client = createOwnedClient(connection);
      this.ownsClient = true;
    }
    this.compactKeys = options.compactKeys ?? false;
  }

  /** Claims `key` for `ttlMs` (the lease) unless a live claim or completion holds it: one script. */
  async tryAcquire(key: string, ttlMs: number, token: string): Promise<AcquireResult> {
    if (token === COMPLETED_VALUE) {
      throw new TypeError(
        `RedisIdempotencyStore: "${COMPLETED_VALUE}" marks completed keys and cannot be a token.`,
      );
    }
    return ACQUIRE_ANSWERS[(await this.run(ACQUIRE, this.keyOf(key), token, toPx(ttlMs))) as number];
  }

  /** Marks `key` completed for `ttlMs` if `token` still owns it (or nobody does); `false`: claim lost. */
  async markComplete(key: string, ttlMs: number, token: string): Promise<boolean> {
    return (await this.run(COMPLETE, this.keyOf(key), token, toPx(ttlMs))) === 1;
  }

  /** Deletes the claim of `token`; `true` when nothing live is left, `false` when another owns the key. */
  async forget(key: string, token: string): Promise<boolean> {
    return (await this.run(FORGET, this.keyOf(key), token)) === 1;
  }

  /** Renews the live claim of `token` to `ttlMs` from now; `false` when it expired or was taken. */
  async extend(key: string, ttlMs: number, token: string): Promise<boolean> {
    return (await this.run(EXTEND, this.keyOf(key), token, toPx(ttlMs))) === 1;
  }

  /**
   * The Redis key under which `key` is stored: `key` itself, or its 12-byte digest with
   * `compactKeys`. For operators and tests (`redis.pttl(store.redisKey(k))`).
   */
  redisKey(key: string): RedisKey {
    return this.keyOf(key);
  }

  /** Closes the connection the store created; a client you passed in stays open (it is yours). */
  async close(): Promise<void> {
    if (!this.ownsClient) return;
    const client = this.client;
    if (client.status !== 'ready') {
      // Never connected, or reconnecting to a server that is gone: nothing to flush, just stop.
      client.disconnect();
      return;
    }
    // QUIT lets the replies in flight arrive; its own reply comes before the socket closes.
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    await client.quit().catch(() => client.disconnect());
    await ended;
  }

  /** Nest lifecycle hook: closes an owned connection when the application shuts down. */
  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  /**
   * One script call: EVALSHA, or EVAL when the server answers NOSCRIPT (it does not know the script
   * yet, or forgot it in a restart or SCRIPT FLUSH); EVAL caches it, so that happens once per server.
   * Fixed arity, no rest arrays: this runs for every message.
   */
  private async run(script: LuaScript, key: RedisKey, token: string, ttl?: number): Promise<unknown> {
    const client = this.client;
    try {
      return await (ttl === undefined
        ? client.evalsha(script.sha, 1, key, token)
        : client.evalsha(script.sha, 1, key, token, ttl));
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return ttl === undefined
        ? client.eval(script.lua, 1, key, token)
        : client.eval(script.lua, 1, key, token, ttl);
    }
  }

  private keyOf(key: string): RedisKey {
    // 96 bits of SHA-256: a 12-byte name fits Redis's smallest allocation class with its header,
    // and a collision needs ~2^48 live keys to become likely (1e9 keys: ~6e-12).
    return this.compactKeys ? createHash('sha256').update(key).digest().subarray(0, 12) : key;
  }
}

/** Options of {@link RedisIdempotencyStore}. */
export interface RedisIdempotencyStoreOptions {
  /**
   * Store each key as a 12-byte digest of it instead of the readable key: about 40% less Redis
   * memory per remembered key, at the price of keys you can no longer read or `SCAN` by prefix.
   * Default `false` (keys are `<keyPrefix>:<scope>:<key>` as the module builds them).
   */
  compactKeys?: boolean;
}

/**
 * ioredis settings for an idempotency store: fast failure during an outage, and batching under load.
 *
 * ioredis's defaults queue a command while the connection is down and retry it through 20
 * reconnection attempts (about 10 s) before failing it. With these, a command waits through at most
 * one reconnection attempt and never longer than `commandTimeout`; the record then fails closed
 * (or runs without dedup with `onStoreError: 'process'`), and the client keeps reconnecting on its
 * own, so the app recovers when Redis returns. Auto-pipelining sends the claims of a whole batch
 * (records run concurrently) in one write. The store applies these to the connections it creates;
 * spread them into your own:
 *
 * @example
 * ```ts
 * const redis = new Redis(process.env.REDIS_URL!, { ...recommendedIoRedisOptions, tls: {} });
 * ```
 */
export const recommendedIoRedisOptions = Object.freeze({
  /** Fail a command after one reconnection attempt instead of twenty. */
  maxRetriesPerRequest: 1,
  /** Bound every command, including one stuck on a server that accepts but does not answer. */
  commandTimeout: 2_000,
  /** Commands issued in the same tick (a batch's concurrent records) go out in one write. */
  enableAutoPipelining: true,
} satisfies RedisOptions);

/** A key as Redis gets it: the module's string, or a digest with `compactKeys`. */
type RedisKey = string | Buffer;

/** Milliseconds as Redis's `PX` wants them: a positive integer (rounded up), or 0 for "never expires". */
function toPx(ttlMs: number): number {
  if (ttlMs === Infinity) return 0;
  if (!(ttlMs > 0)) {
    throw new RangeError(
      `RedisIdempotencyStore: a TTL must be a positive number of milliseconds, got ${ttlMs}.`,
    );
  }
  return Math.ceil(ttlMs);
}

function isIoRedisClient(connection: unknown): connection is Redis | Cluster {
  return (
    typeof connection === 'object' &&
    connection !== null &&
    typeof (connection as { evalsha?: unknown }).evalsha === 'function'
  );
}

function createOwnedClient(connection: string | RedisOptions): Redis {
  let IoRedis: typeof import('ioredis').Redis;
  try {
    // Loaded here, not imported at the top, so apps that never use this store need no ioredis.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    IoRedis = require('ioredis').Redis;
  } catch (error) {
    throw new Error(
      `RedisIdempotencyStore needs the "ioredis" package to connect (npm install ioredis): ${(error as Error).message}`,
    );
  }
  // lazyConnect: constructing the store (often at import time, in a module decorator) opens no
  // socket; the first command connects.
  const defaults: RedisOptions = { ...recommendedIoRedisOptions, lazyConnect: true };
  return typeof connection === 'string'
    ? new IoRedis(connection, defaults)
    : new IoRedis({ ...defaults, ...connection });
}
