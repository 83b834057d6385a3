import type { OnApplicationShutdown } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { AcquireResult, IdempotencyStore } from './idempotency-store.interface';
import {
  ACQUIRE_ANSWERS,
  ACQUIRE_SCRIPT,
  COMPLETE_SCRIPT,
  COMPLETED_VALUE,
  EXTEND_SCRIPT,
  FORGET_SCRIPT,
} from './redis-idempotency.scripts';

/**
 * Shares dedup state between instances through Redis (or Valkey), over `ioredis`.
 *
 * Why it looks the way it does:
 * - Each method is one round trip: a Lua script decides and writes atomically, so two workers can
 *   never both claim a key and no read-then-write race exists. ioredis sends a script with EVAL once
 *   per connection, then by SHA (EVALSHA), and falls back to EVAL on `NOSCRIPT` (a restarted server).
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
  private readonly commands: ScriptedClient;
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
    // defineCommand adds the methods to this client; the names are namespaced so they cannot clash
    // with a user's own scripts, and defining them again (two stores, one client) is harmless.
    const client = this.client;
    client.defineCommand(SCRIPTS.acquire, { numberOfKeys: 1, lua: ACQUIRE_SCRIPT });
    client.defineCommand(SCRIPTS.complete, { numberOfKeys: 1, lua: COMPLETE_SCRIPT });
    client.defineCommand(SCRIPTS.forget, { numberOfKeys: 1, lua: FORGET_SCRIPT });
    client.defineCommand(SCRIPTS.extend, { numberOfKeys: 1, lua: EXTEND_SCRIPT });
    this.commands = client as unknown as ScriptedClient;
  }

  async tryAcquire(key: string, ttlMs: number, token: string): Promise<AcquireResult> {
    if (token === COMPLETED_VALUE) {
      throw new TypeError(
        `RedisIdempotencyStore: "${COMPLETED_VALUE}" marks completed keys and cannot be a token.`,
      );
    }
    const reply = await this.commands.nestjsIdempotentSqsAcquire(this.keyOf(key), toPx(ttlMs), token);
    return ACQUIRE_ANSWERS[reply];
  }

  async markComplete(key: string, ttlMs: number, token: string): Promise<boolean> {
    return (await this.commands.nestjsIdempotentSqsComplete(this.keyOf(key), toPx(ttlMs), token)) === 1;
  }

  async forget(key: string, token: string): Promise<boolean> {
    return (await this.commands.nestjsIdempotentSqsForget(this.keyOf(key), token)) === 1;
  }

  async extend(key: string, ttlMs: number, token: string): Promise<boolean> {
    return (await this.commands.nestjsIdempotentSqsExtend(this.keyOf(key), toPx(ttlMs), token)) === 1;
  }

  /**
   * The Redis key under which `key` is stored: `key` itself, or its 12-byte digest with
   * `compactKeys`. For operators and tests (`redis.pttl(store.redisKey(k))`).
   */
  redisKey(key: string): string | Buffer {
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

  private keyOf(key: string): string | Buffer {
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
 * ioredis settings under which a Redis outage fails records fast instead of stalling them.
 *
 * ioredis's defaults queue a command while the connection is down and retry it through 20
 * reconnection attempts (about 10 s) before failing it. With these, a command waits through at most
 * one reconnection attempt and never longer than `commandTimeout`; the record then fails closed
 * (or runs without dedup with `onStoreError: 'process'`), and the client keeps reconnecting on its
 * own, so the app recovers when Redis returns. The store applies them to the connections it creates;
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
} satisfies RedisOptions);

/** The script methods `defineCommand` adds to the client. */
const SCRIPTS = {
  acquire: 'nestjsIdempotentSqsAcquire',
  complete: 'nestjsIdempotentSqsComplete',
  forget: 'nestjsIdempotentSqsForget',
  extend: 'nestjsIdempotentSqsExtend',
} as const;

interface ScriptedClient {
  nestjsIdempotentSqsAcquire(key: string | Buffer, leaseMs: number, token: string): Promise<0 | 1 | 2>;
  nestjsIdempotentSqsComplete(key: string | Buffer, ttlMs: number, token: string): Promise<number>;
  nestjsIdempotentSqsForget(key: string | Buffer, token: string): Promise<number>;
  nestjsIdempotentSqsExtend(key: string | Buffer, leaseMs: number, token: string): Promise<number>;
}

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
    typeof (connection as { defineCommand?: unknown }).defineCommand === 'function'
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
