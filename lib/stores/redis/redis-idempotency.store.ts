import type { OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { createHash } from 'node:crypto';
import {
  AcquireAnswer,
  AcquireResult,
  BatchClaim,
  BatchCompletion,
  FingerprintClaim,
  IdempotencyKeyInspection,
  IdempotencyStore,
  IdempotencyStoreWarning,
} from '../idempotency-store.interface';
import { keptClaimAnswer, keptClaimOf, liveKeyInspection, wholeTtlMs } from '../store-helpers';
import {
  IoRedisOptions,
  RedisConnection,
  RedisIdempotencyStoreOptions,
  RedisScriptClient,
} from './redis-connection';
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
import { readOptions } from '../../common/known-options';

/**
 * Shares dedup state between instances through Redis (or Valkey), over `ioredis`. Each call is one
 * atomic round trip (a `SET NX GET` claim, Lua scripts that compare tokens for the rest), fenced by
 * the attempt's token, expiring by Redis's own `PX`; batch calls send a batch's keys in one script
 * (one per hash slot on a cluster). ioredis is loaded only when the store creates its own client.
 *
 * @example
 * ```ts
 * const redis = new Redis(process.env.REDIS_URL!, recommendedIoRedisOptions);
 * IdempotencyModule.forRoot({ store: new RedisIdempotencyStore(redis), service: 'billing' });
 * ```
 */
export class RedisIdempotencyStore implements IdempotencyStore, OnModuleInit, OnApplicationShutdown {
  /** Every process connected to the server sees the same keys: the module needs a service identity. */
  readonly shared = true;
  /** `PX` takes a signed 64-bit count; 2^53 - 1 fits well inside it. */
  readonly maxTtlMs = Number.MAX_SAFE_INTEGER;
  /** A claim's fingerprint is written after its token, in the key's one value. */
  readonly keepsFingerprints = true;
  /** Whose client it is, where it points, its outages and start-up checks (`redis-connection.ts`). */
  private readonly connection: RedisConnection;
  private readonly compactKeys: boolean;
  /** Set once the server refused `SET ... NX GET` (Redis before 7.0): claims go through a script. */
  private claimsByScript = false;
  /** How the batch scripts are sent: past the client's auto-pipeline where it has one, else (`undefined`) through its `evalsha`. */
  private batchSender: Promise<SendCommand | undefined> | undefined;

  /**
   * @param connection a `Redis` or `Cluster` you own, or a `redis://` URL or ioredis options for a client
   *   the store creates (on its first command) and closes with its app, with {@link recommendedIoRedisOptions}
   *   under yours. `undefined` or `''` (an unset `REDIS_URL`) is refused at start-up.
   */
  constructor(
    connection: RedisScriptClient | string | IoRedisOptions,
    given: RedisIdempotencyStoreOptions = {},
  ) {
    const options = readOptions(
      given,
      {
        compactKeys: 'boolean',
        failFastOnStartup: 'boolean',
        startupTimeoutMs: 'number',
        serverCheck: 'string',
      },
      'RedisIdempotencyStore options',
    );
    this.connection = new RedisConnection(connection, options);
    this.compactKeys = options.compactKeys ?? false;
  }

  /** The client the store talks through (`undefined` before its first command). */
  get client(): RedisScriptClient | undefined {
    return this.connection.client;
  }

  /** Claims `key` for `ttlMs` (the lease) unless a live claim or completion holds it: one command. */
  tryAcquire(key: string, ttlMs: number, token: string): Promise<AcquireResult>;
  /** With `claim`, its fingerprint and message id are written after the token, in the same command. */
  tryAcquire(key: string, ttlMs: number, token: string, claim?: FingerprintClaim): Promise<AcquireAnswer>;
  async tryAcquire(key: string, ttlMs: number, token: string, claim?: FingerprintClaim) {
    checkToken(token);
    const value = claim ? `${token} ${keptClaimOf(claim, 'RedisIdempotencyStore')}` : token;
    const held = await this.claim(key, value, ttlMs);
    const result = acquireAnswerOf(held);
    // `<token>[ <fingerprint>[ <message id>]]`, or `1 ...` once completed.
    const space = claim && held !== null ? held.indexOf(' ') : -1;
    return space < 0 ? result : keptClaimAnswer(result, held!.slice(space + 1));
  }

  /** `SET key value PX lease NX GET` (or its script before Redis 7): `null` when claimed, else what the key holds. */
  private async claim(key: string, value: string, ttlMs: number): Promise<string | null> {
    const redisKey = this.redisKey(key);
    const px = toPx(ttlMs);
    if (this.claimsByScript) return (await this.run(ACQUIRE, redisKey, value, px)) as string | null;
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
      return (await this.run(ACQUIRE, redisKey, value, px)) as string | null;
    }
    this.connection.watch.answered();
    return held;
  }

  /** Marks `key` completed for `ttlMs` if `token` still owns it (or nobody does); `false`: claim lost. */
  async markComplete(key: string, ttlMs: number, token: string): Promise<boolean> {
    return (await this.run(COMPLETE, this.redisKey(key), token, toPx(ttlMs))) === 1;
  }

  /** `tryAcquire` for each claim in one script call (one per hash slot on a cluster), all checked first. */
  async tryAcquireMany(claims: readonly BatchClaim[]): Promise<AcquireResult[]> {
    return (await this.runBatch(ACQUIRE_MANY, claims, 'tryAcquireMany', 2)).map(
      (answer) => ACQUIRE_MANY_ANSWERS[answer],
    );
  }

  /** `markComplete` for each completion in one script call (one per hash slot on a cluster). */
  async markCompleteMany(completions: readonly BatchCompletion[]): Promise<boolean[]> {
    return (await this.runBatch(COMPLETE_MANY, completions, 'markCompleteMany', 1)).map(
      (answer) => answer === 1,
    );
  }

  /**
   * Sends entries through a batch script, one call per server (or hash slot), at most
   * `MAX_KEYS_PER_SCRIPT` keys a call; answers its small integers in the entries' order.
   */
  private async runBatch(
    script: LuaScript,
    entries: readonly (BatchClaim | BatchCompletion)[],
    method: string,
    largest: number,
  ): Promise<number[]> {
    if (!Array.isArray(entries))
      throw new TypeError(`RedisIdempotencyStore.${method}: expected an array, got ${typeof entries}.`);
    const keys = new Array<RedisKey>(entries.length);
    const args = new Array<string | number>(entries.length * 2);
    for (let i = 0; i < entries.length; i++) {
      const { key, ttlMs, token } = entries[i];
      keys[i] = this.redisKey(key);
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
          client,
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
    return (await this.run(FORGET, this.redisKey(key), token)) === 1;
  }

  /** Renews the live claim of `token` to `ttlMs` from now; `false` when it expired or was taken. */
  async extend(key: string, ttlMs: number, token: string): Promise<boolean> {
    return (await this.run(EXTEND, this.redisKey(key), token, toPx(ttlMs))) === 1;
  }

  /** What Redis holds for `key`, read-only, for the Center's key lookup. */
  async inspect(key: string): Promise<IdempotencyKeyInspection> {
    const answer = (await this.run(INSPECT, this.redisKey(key), '')) as [number, number] | null;
    if (!Array.isArray(answer)) return { state: 'UNKNOWN' };
    const [completed, pttl] = answer;
    return liveKeyInspection(completed === 1, pttl >= 0 ? pttl : undefined);
  }

  /** Closes the connection the store created; a client you passed in stays open (it is yours). */
  close(): Promise<void> {
    return this.connection.close();
  }

  /** With `failFastOnStartup`, a PING must answer within `startupTimeoutMs`; then the server check. */
  onModuleInit(): Promise<void> {
    return this.connection.startUp();
  }

  /** Settings under which the server forgets completed keys early, as the last check found them (shown by the Center). */
  get warnings(): readonly IdempotencyStoreWarning[] {
    return this.connection.warnings;
  }

  /** Warns of each server setting under which Redis may forget keys early; re-run on every reconnection. */
  checkServer(): Promise<readonly IdempotencyStoreWarning[]> {
    return this.connection.checkServer();
  }

  /** Nest lifecycle hook: closes an owned connection when the application shuts down. */
  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  /** A script call on one key. Fixed arity, no arrays: it runs per message. */
  private async run(script: LuaScript, key: RedisKey, token: string, ttl?: number): Promise<unknown> {
    const client = this.connection.client ?? (await this.connection.open());
    return this.evalScript(script, (command, text) =>
      ttl === undefined ? client[command](text, 1, key, token) : client[command](text, 1, key, token, ttl),
    );
  }

  /** A script call over several keys (the batch methods), past the auto-pipeline where the client allows. */
  private async runMany(
    client: RedisScriptClient,
    script: LuaScript,
    keys: RedisKey[],
    args: Array<string | number>,
  ): Promise<unknown> {
    const send = await (this.batchSender ??= unpipelinedSenderFor(client));
    return this.evalScript(script, (command, text) =>
      send
        ? send(command, [text, keys.length, ...keys, ...args])
        : client[command](text, keys.length, ...keys, ...args),
    );
  }

  /** EVALSHA; a server without the script (NOSCRIPT) gets its text once, which EVAL caches. */
  private async evalScript(
    script: LuaScript,
    call: (command: 'evalsha' | 'eval', text: string) => Promise<unknown>,
  ): Promise<unknown> {
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
    this.connection.watch.answered();
    return answer;
  }

  /** The Redis key of `key` (its 12-byte digest with `compactKeys`), for operators and tests. */
  redisKey(key: string): RedisKey {
    // 96 bits of SHA-256: a 12-byte name fits Redis's smallest allocation class with its header,
    // and a collision needs ~2^48 live keys to become likely (1e9 keys: ~6e-12).
    return this.compactKeys ? createHash('sha256').update(key).digest().subarray(0, 12) : key;
  }
}

/** A key as Redis gets it: the module's string, or a digest with `compactKeys`. */
type RedisKey = string | Buffer;

/** `token`, refused when it could be misread in a value (`"1"` is the completed marker; a space precedes a fingerprint). */
function checkToken(token: string): string {
  if (token === COMPLETED_VALUE || token.includes(' ')) {
    throw new TypeError(
      `RedisIdempotencyStore: a token cannot be "${COMPLETED_VALUE}" (it marks completed keys) or hold a space ` +
        `(it separates a token from its fingerprint), got ${JSON.stringify(token)}.`,
    );
  }
  return token;
}

/** The most keys one batch script call carries: a script holds the server while it runs. */
const MAX_KEYS_PER_SCRIPT = 500;

/** Each batch call's entries: one group per hash slot on a cluster (else one), in chunks of `MAX_KEYS_PER_SCRIPT`. */
function batchGroups(keys: readonly RedisKey[], cluster: boolean): number[][] {
  const bySlot = new Map<number, number[]>();
  keys.forEach((key, index) => {
    const slot = cluster ? clusterSlotOf(key) : 0;
    const indexes = bySlot.get(slot);
    if (indexes) indexes.push(index);
    else bySlot.set(slot, [index]);
  });
  const groups: number[][] = [];
  for (const indexes of bySlot.values()) {
    for (let start = 0; start < indexes.length; start += MAX_KEYS_PER_SCRIPT) {
      groups.push(
        indexes.length <= MAX_KEYS_PER_SCRIPT ? indexes : indexes.slice(start, start + MAX_KEYS_PER_SCRIPT),
      );
    }
  }
  return groups;
}

/** Milliseconds as Redis's `PX` wants them: a positive integer (rounded up), or 0 for "never expires". */
function toPx(ttlMs: number): number {
  return wholeTtlMs(ttlMs, 'RedisIdempotencyStore') ?? 0;
}
