import type { OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { createHash } from 'node:crypto';
import {
  ACQUIRED_WITH_FINGERPRINT,
  AcquireResult,
  BatchClaim,
  BatchCompletion,
  FingerprintClaim,
  FingerprintedAcquireAnswer,
  IdempotencyKeyInspection,
  IdempotencyStore,
  IdempotencyStoreWarning,
} from '../idempotency-store.interface';
import { checkFingerprintClaim } from '../fingerprint-claim.check';
import { IoRedisOptions, RedisConnection, RedisScriptClient, RedisServerCheck } from './redis-connection';
import { clusterSlotOf } from './redis-cluster-slot';
import { SendCommand, unpipelinedSenderFor } from './redis-unpipelined-command';
import {
  ACQUIRE,
  ACQUIRE_MANY,
  ACQUIRE_MANY_ANSWERS,
  acquireAnswerOf,
  COMPLETE,
  COMPLETE_MANY,
  COMPLETED_VALUE,
  EXTEND,
  FORGET,
  INSPECT,
  LuaScript,
} from './redis-idempotency.scripts';

export { recommendedIoRedisOptions } from './redis-connection';
export type { IoRedisOptions, RedisScriptClient, RedisServerCheck } from './redis-connection';

/**
 * Shares dedup state between instances through Redis (or Valkey), over `ioredis`.
 *
 * Why it looks the way it does:
 * - Each method is one round trip that decides and writes atomically, so two workers can never both
 *   claim a key and no read-then-write race exists. Claiming, every message's step, is one plain
 *   `SET key token NX GET PX lease` (Redis 7+, Valkey; a Lua script on older servers); completing,
 *   releasing and extending compare tokens in Lua scripts. Scripts go by SHA (EVALSHA); a server
 *   that does not know one (first use, restart, SCRIPT FLUSH) gets it once in full (EVAL).
 *   The client is used as it is: the store adds no commands to it.
 * - Fencing: the claim holds the attempt's token; completing, releasing and extending act only while
 *   it still does, and answer `false` otherwise.
 * - Expiry is Redis's own `PX`, so no clocks are compared between hosts.
 * - A completed key holds `"1"` (no JSON), and `compactKeys` shrinks the name too. A claim with a
 *   payload fingerprint holds it after the token (`"<token> <fingerprint> <message id>"`, then
 *   `"1 <fingerprint> <message id>"`), claimed by the same one command.
 * - Every single-key script touches one key, so it runs unchanged on Redis Cluster. The batch methods
 *   (`tryAcquireMany`, `markCompleteMany`) send a batch's keys in one script call, or on a cluster one
 *   per hash slot (a script may only touch keys of one slot).
 *
 * ioredis stays an optional peer dependency: the store takes any client with the commands it uses
 * (an ioredis `Redis` or `Cluster`), and loads ioredis itself, on the first command, only when it
 * creates its own connection.
 *
 * @example
 * ```ts
 * // A client you own (and close); `service` keeps this service's keys apart from others' on the server:
 * const redis = new Redis(process.env.REDIS_URL!, recommendedIoRedisOptions);
 * IdempotencyModule.forRoot({ store: new RedisIdempotencyStore(redis), service: 'billing' });
 *
 * // Or a connection the store owns and closes on application shutdown:
 * IdempotencyModule.forRoot({ store: new RedisIdempotencyStore(process.env.REDIS_URL!), service: 'billing' });
 * ```
 */
export class RedisIdempotencyStore implements IdempotencyStore, OnModuleInit, OnApplicationShutdown {
  /** Every process connected to the server sees the same keys: the module needs a service identity. */
  readonly shared = true;
  /**
   * `PX` is a signed 64-bit count of milliseconds added to the server's clock; the largest integer
   * JavaScript writes exactly (2^53 - 1, about 285,000 years) is well inside it.
   */
  readonly maxTtlMs = Number.MAX_SAFE_INTEGER;
  /** Whose client it is, where it points, its outages and start-up checks (`redis-connection.ts`). */
  private readonly connection: RedisConnection;
  private readonly compactKeys: boolean;
  /** Set once the server refused `SET ... NX GET` (Redis before 7.0): claims go through a script. */
  private claimsByScript = false;
  /**
   * How the batch scripts are sent: past the client's auto-pipeline (`redis-unpipelined-command.ts`),
   * or `null` through the client's own `evalsha`; `undefined` until the first batch call looks.
   */
  private batchSender: SendCommand | null | undefined;
  private lookingForBatchSender: Promise<SendCommand | null> | undefined;

  /**
   * @param connection a `Redis` or `Cluster` instance you own, or a `redis://` URL or ioredis
   *   options from which the store creates (on its first command, and on shutdown closes) its own
   *   client with {@link recommendedIoRedisOptions} applied under yours.
   */
  constructor(
    connection: RedisScriptClient | string | IoRedisOptions,
    options: RedisIdempotencyStoreOptions = {},
  ) {
    this.connection = new RedisConnection(connection, options);
    this.compactKeys = options.compactKeys ?? false;
  }

  /**
   * The client the store talks through: yours, or the one it created (`undefined` until its first
   * command).
   */
  get client(): RedisScriptClient | undefined {
    return this.connection.client;
  }

  /** Claims `key` for `ttlMs` (the lease) unless a live claim or completion holds it: one command. */
  async tryAcquire(key: string, ttlMs: number, token: string): Promise<AcquireResult> {
    return acquireAnswerOf(await this.claim(key, checkToken(token), ttlMs));
  }

  /**
   * `tryAcquire` with the claim's fingerprint (and message id) written after the token, in the same
   * one command; a held key answers with the fingerprint its value carries.
   */
  async tryAcquireWithFingerprint(
    key: string,
    ttlMs: number,
    token: string,
    claim: FingerprintClaim,
  ): Promise<FingerprintedAcquireAnswer> {
    const held = await this.claim(key, fingerprintedValueOf(checkToken(token), claim), ttlMs);
    if (held === null) return ACQUIRED_WITH_FINGERPRINT;
    const result = acquireAnswerOf(held);
    const first = held.indexOf(' ');
    if (first < 0) return { result };
    const second = held.indexOf(' ', first + 1);
    return second < 0
      ? { result, fingerprint: held.slice(first + 1) }
      : { result, fingerprint: held.slice(first + 1, second), messageId: held.slice(second + 1) };
  }

  /** `SET key value PX lease NX GET` (or its script before Redis 7): `null` when claimed, else what the key holds. */
  private async claim(key: string, value: string, ttlMs: number): Promise<string | null> {
    const redisKey = this.keyOf(key);
    const px = toPx(ttlMs);
    if (this.claimsByScript) return this.acquireByScript(redisKey, value, px);
    const client = this.connection.client ?? (await this.connection.open());
    let held: string | null;
    try {
      held = await (px === 0
        ? client.set(redisKey, value, 'NX', 'GET')
        : client.set(redisKey, value, 'PX', px, 'NX', 'GET'));
    } catch (error) {
      // Redis before 7.0 rejects NX with GET as a syntax error, before touching the key.
      if (!(error instanceof Error) || !/^ERR syntax error/i.test(error.message))
        throw this.connection.failure(error);
      this.claimsByScript = true;
      return this.acquireByScript(redisKey, value, px);
    }
    this.connection.answered();
    return held;
  }

  /** Marks `key` completed for `ttlMs` if `token` still owns it (or nobody does); `false`: claim lost. */
  async markComplete(key: string, ttlMs: number, token: string): Promise<boolean> {
    return (await this.run(COMPLETE, this.keyOf(key), token, toPx(ttlMs))) === 1;
  }

  /**
   * `tryAcquire` for each claim, answered in order: one script call for the whole batch (on a
   * cluster, one per hash slot of its keys), each key decided as `tryAcquire` decides it. Every
   * token and TTL is checked before anything is sent.
   */
  async tryAcquireMany(claims: readonly BatchClaim[]): Promise<AcquireResult[]> {
    return (await this.runBatch(ACQUIRE_MANY, claims, 'tryAcquireMany', 2)).map(
      (answer) => ACQUIRE_MANY_ANSWERS[answer],
    );
  }

  /**
   * `markComplete` for each completion, answered in order (`false`: the claim was lost): one script
   * call for the whole batch (on a cluster, one per hash slot), fenced as `markComplete` is.
   */
  async markCompleteMany(completions: readonly BatchCompletion[]): Promise<boolean[]> {
    return (await this.runBatch(COMPLETE_MANY, completions, 'markCompleteMany', 1)).map(
      (answer) => answer === 1,
    );
  }

  /**
   * Sends `entries` through a batch script: one call on a single server, one per hash slot on a
   * cluster, at most `MAX_KEYS_PER_SCRIPT` keys a call (a script holds the server while it runs).
   * Answers the script's small integers (0 to `largest`) in the entries' order; any other reply is
   * a failure.
   */
  private async runBatch(
    script: LuaScript,
    entries: readonly (BatchClaim | BatchCompletion)[],
    method: string,
    largest: number,
  ): Promise<number[]> {
    if (!Array.isArray(entries)) {
      throw new TypeError(`RedisIdempotencyStore.${method}: expected an array, got ${typeof entries}.`);
    }
    const keys = new Array<RedisKey>(entries.length);
    const args = new Array<string | number>(entries.length * 2);
    for (let i = 0; i < entries.length; i++) {
      const { key, ttlMs, token } = entries[i];
      keys[i] = this.keyOf(key);
      args[2 * i] = checkToken(token);
      args[2 * i + 1] = toPx(ttlMs);
    }
    if (entries.length === 0) return [];
    const client = this.connection.client ?? (await this.connection.open());
    const groups = batchGroups(keys, client.isCluster === true);
    const answers = new Array<number>(entries.length);
    await Promise.all(
      groups.map(async (indexes) => {
        // The usual case, one server and a batch under the limit: the whole batch as built.
        const whole = indexes.length === entries.length;
        const reply = await this.runMany(
          script,
          whole ? keys : indexes.map((index) => keys[index]),
          whole ? args : indexes.flatMap((index) => [args[2 * index], args[2 * index + 1]]),
        );
        const valid = (answer: unknown) =>
          Number.isInteger(answer) && (answer as number) >= 0 && (answer as number) <= largest;
        if (!Array.isArray(reply) || reply.length !== indexes.length || !reply.every(valid)) {
          throw this.connection.failure(
            new Error(`${method}: unexpected reply ${JSON.stringify(reply)} for ${indexes.length} keys`),
          );
        }
        for (let i = 0; i < indexes.length; i++) answers[indexes[i]] = reply[i] as number;
      }),
    );
    return answers;
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
   * What Redis holds for `key`, read-only (one script: `GET` and `PTTL`), for the Idempotency
   * Center's key lookup. Never writes, and never extends a lease.
   */
  async inspect(key: string): Promise<IdempotencyKeyInspection> {
    const answer = (await this.run(INSPECT, this.keyOf(key), '')) as [number, number] | null;
    if (!Array.isArray(answer)) return { state: 'UNKNOWN' };
    const [completed, pttl] = answer;
    if (completed === 1)
      return pttl >= 0 ? { state: 'COMPLETED', expiresInMs: pttl } : { state: 'COMPLETED' };
    return pttl >= 0 ? { state: 'IN_PROGRESS', leaseLeftMs: pttl } : { state: 'IN_PROGRESS' };
  }

  /**
   * The Redis key under which `key` is stored: `key` itself, or its 12-byte digest with
   * `compactKeys`. For operators and tests (`redis.pttl(store.redisKey(k))`).
   */
  redisKey(key: string): RedisKey {
    return this.keyOf(key);
  }

  /** Closes the connection the store created; a client you passed in stays open (it is yours). */
  close(): Promise<void> {
    return this.connection.close();
  }

  /**
   * Nest lifecycle hook. With `failFastOnStartup`, PINGs Redis and stops the application's start-up
   * with an `IdempotencyStoreUnavailableError` naming the address when no answer comes within
   * `startupTimeoutMs`; otherwise the app starts whether Redis is up or not. Then checks how the
   * server keeps keys (`serverCheck`).
   */
  onModuleInit(): Promise<void> {
    return this.connection.startUp();
  }

  /**
   * What the server check found: settings under which Redis forgets completed keys early (an
   * evicting `maxmemory-policy`, no persistence). Empty when the server is safe or not checked yet.
   * Read by the Idempotency Center.
   */
  get warnings(): readonly IdempotencyStoreWarning[] {
    return this.connection.warnings;
  }

  /**
   * Reads the server's settings (`INFO memory`, `INFO persistence`) and logs one warning naming each
   * setting under which it may forget completed keys before their ttl. Runs at start-up and on every
   * (re)connection after it (unless `serverCheck: 'off'`), so a Redis unreachable at start-up, or
   * replaced by a failover, is checked once it answers; what it finds replaces `warnings` (and the
   * Center's list). A call while a check is in flight joins it. Rejects when Redis cannot be read.
   */
  checkServer(): Promise<readonly IdempotencyStoreWarning[]> {
    return this.connection.checkServer();
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
    const client = this.connection.client ?? (await this.connection.open());
    let answer: unknown;
    try {
      answer = await (ttl === undefined
        ? client.evalsha(script.sha, 1, key, token)
        : client.evalsha(script.sha, 1, key, token, ttl));
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT'))
        throw this.connection.failure(error);
      try {
        answer = await (ttl === undefined
          ? client.eval(script.lua, 1, key, token)
          : client.eval(script.lua, 1, key, token, ttl));
      } catch (evalError) {
        throw this.connection.failure(evalError);
      }
    }
    this.connection.answered();
    return answer;
  }

  /** A script call over several keys (the batch methods): EVALSHA, EVAL on NOSCRIPT, as `run`. */
  private async runMany(script: LuaScript, keys: RedisKey[], args: Array<string | number>): Promise<unknown> {
    const client = this.connection.client ?? (await this.connection.open());
    const send = this.batchSender !== undefined ? this.batchSender : await this.findBatchSender(client);
    const call = (command: 'evalsha' | 'eval', script: string) =>
      send
        ? send(command, [script, keys.length, ...keys, ...args])
        : client[command](script, keys.length, ...keys, ...args);
    let answer: unknown;
    try {
      answer = await call('evalsha', script.sha);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT'))
        throw this.connection.failure(error);
      try {
        answer = await call('eval', script.lua);
      } catch (evalError) {
        throw this.connection.failure(evalError);
      }
    }
    this.connection.answered();
    return answer;
  }

  private findBatchSender(client: RedisScriptClient): Promise<SendCommand | null> {
    this.lookingForBatchSender ??= unpipelinedSenderFor(client).then(
      (send) => (this.batchSender = send ?? null),
    );
    return this.lookingForBatchSender;
  }

  private async acquireByScript(key: RedisKey, value: string, px: number): Promise<string | null> {
    return (await this.run(ACQUIRE, key, value, px)) as string | null;
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
  /**
   * Check Redis when the application starts (`onModuleInit`): when it does not answer a PING within
   * `startupTimeoutMs`, the start-up fails with an `IdempotencyStoreUnavailableError` naming the
   * address. Default `false`: the app starts without Redis, its records fail closed (or run without
   * dedup with `onStoreError: 'process'`) until Redis answers, then succeed without a restart.
   * Pick `true` where a deployment should roll back rather than run without its store.
   */
  failFastOnStartup?: boolean;
  /** How long the start-up checks wait for Redis, in milliseconds. Default 5 000. */
  startupTimeoutMs?: number;
  /**
   * At start-up and on every reconnection, read how the server keeps keys (`INFO memory`, `INFO persistence`) and look for the
   * settings under which it forgets completed keys before their ttl, letting duplicates run again:
   * an evicting `maxmemory-policy` (`allkeys-*`, `volatile-*`) and no persistence (no AOF; no RDB
   * either). `'warn'` (default): one warning naming each, in the background (start-up does not
   * wait), also listed in `warnings` and the Idempotency Center. `'fail'`: the app does not start
   * (`IdempotencyConfigurationError`), nor when Redis does not answer within `startupTimeoutMs`.
   * `'off'`: no check. A safe server (`noeviction`, AOF on) gets no warning.
   */
  serverCheck?: RedisServerCheck;
}

/** A key as Redis gets it: the module's string, or a digest with `compactKeys`. */
type RedisKey = string | Buffer;

/**
 * `token`, refused when a key's value could be misread with it: `"1"` marks completed keys, and a
 * space separates a token from its fingerprint.
 */
function checkToken(token: string): string {
  if (token === COMPLETED_VALUE || token.includes(' ')) {
    throw new TypeError(
      `RedisIdempotencyStore: a token cannot be "${COMPLETED_VALUE}" (it marks completed keys) or hold a space ` +
        `(it separates a token from its fingerprint), got ${JSON.stringify(token)}.`,
    );
  }
  return token;
}

/** The value of a claim with a fingerprint: `"<token> <fingerprint>[ <message id>]"`. */
function fingerprintedValueOf(token: string, claim: FingerprintClaim): string {
  const { fingerprint, messageId } = checkFingerprintClaim(claim, 'RedisIdempotencyStore');
  return messageId ? `${token} ${fingerprint} ${messageId}` : `${token} ${fingerprint}`;
}

/** The most keys one batch script call carries: a script holds the server while it runs. */
const MAX_KEYS_PER_SCRIPT = 500;

/**
 * The entries (by index) each batch script call carries: all of them on a single server, grouped by
 * hash slot on a cluster; in chunks of at most `MAX_KEYS_PER_SCRIPT`, each in the batch's order.
 */
function batchGroups(keys: readonly RedisKey[], cluster: boolean): number[][] {
  const groups: number[][] = [];
  const chunk = (indexes: number[]) => {
    for (let start = 0; start < indexes.length; start += MAX_KEYS_PER_SCRIPT) {
      groups.push(indexes.slice(start, start + MAX_KEYS_PER_SCRIPT));
    }
  };
  if (!cluster) {
    chunk(keys.map((_, index) => index));
    return groups;
  }
  const bySlot = new Map<number, number[]>();
  keys.forEach((key, index) => {
    const slot = clusterSlotOf(key);
    const indexes = bySlot.get(slot);
    if (indexes) indexes.push(index);
    else bySlot.set(slot, [index]);
  });
  for (const indexes of bySlot.values()) chunk(indexes);
  return groups;
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
