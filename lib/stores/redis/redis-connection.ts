import { Logger } from '@nestjs/common';
import type { RedisOptions } from 'ioredis';
import { IdempotencyConfigurationError } from '../../common/sqs-idempotency.error';
import { IdempotencyStoreUnavailableError } from '../idempotency-store.errors';
import {
  IdempotencyStoreClosedError,
  isMissingConnection,
  missingConnectionError,
} from '../connection-refusals';
import { optionalPeer } from '../../common/optional-peer';
import type { IdempotencyStoreWarning } from '../idempotency-store.interface';
import { ConnectionWatch, isConnectionFailure, WHILE_AWAY } from '../connection-watch';
import { hasMethods, startupTimeoutOf } from '../store-helpers';
import { answerWithin } from '../../common/answer-within';
import { describeRedisRisks, readRedisRisks, RedisInfoClient } from './redis-server-check';

/**
 * The store's connection, apart from its protocol: whose client it is (yours, left open, or one it
 * creates on first use and closes), where it points, its outages, and the start-up checks.
 */
export class RedisConnection {
  /** The client: yours, or the one created (`undefined` until the first command). */
  client: RedisScriptClient | undefined;
  private connecting: Promise<RedisScriptClient> | undefined;
  /** What the store builds its own client from (`undefined` when it talks through yours). */
  private readonly ownedConnection: string | IoRedisOptions | undefined;
  /** The store creates its client (from a URL or options), so it closes it, and is closed for good then. */
  private readonly owned: boolean;
  /** Closed with its application: an owned connection is not opened again (see `IdempotencyStoreClosedError`). */
  private closed = false;
  /** Where it connects, for messages: the URL without credentials, or host and port. */
  private readonly address: string;
  private readonly failFastOnStartup: boolean;
  private readonly startupTimeoutMs: number;
  private readonly serverCheck: RedisServerCheck;
  private readonly where: string;
  private readonly logger = new Logger('RedisIdempotencyStore');
  /** Its outages: `answered()` after each command that got an answer. */
  readonly watch: ConnectionWatch;
  private checking: Promise<readonly IdempotencyStoreWarning[]> | undefined;
  /** What the last server check found. */
  warnings: readonly IdempotencyStoreWarning[] = [];
  /** What the last check that got an answer found, as logged (to log only what changed). */
  private reported = '';
  /** `startUp()` ran: from then on every (re)connection reads the server's settings again. */
  private started = false;

  constructor(
    connection: RedisScriptClient | string | IoRedisOptions,
    options: Omit<RedisIdempotencyStoreOptions, 'compactKeys'>,
  ) {
    this.owned = !hasMethods<RedisScriptClient>(connection, 'evalsha');
    this.address = isMissingConnection(connection) ? 'no address given' : describeAddress(connection);
    this.where = `Redis at ${this.address}`;
    this.watch = new ConnectionWatch(
      this.logger,
      () => this.where,
      (error) => ` is unreachable (${error.message}): ${WHILE_AWAY}. Reconnecting in the background.`,
    );
    if (!this.owned) {
      this.client = connection as RedisScriptClient;
      this.watch.watch(connection, 'ready', () => this.recheck());
    } else this.ownedConnection = connection;
    this.failFastOnStartup = options.failFastOnStartup ?? false;
    this.serverCheck = options.serverCheck ?? 'warn';
    if (!['warn', 'fail', 'off'].includes(this.serverCheck)) {
      throw new IdempotencyConfigurationError(
        `RedisIdempotencyStore: serverCheck must be 'warn', 'fail' or 'off', got ${String(options.serverCheck)}.`,
      );
    }
    this.startupTimeoutMs = startupTimeoutOf(options, 'RedisIdempotencyStore');
  }

  /** The client, created on first use when the store owns it. */
  open(): RedisScriptClient | Promise<RedisScriptClient> {
    return this.client ?? this.connect();
  }

  /**
   * A failed command as an error naming the store, the address and the cause (as `cause`); a timeout
   * on a live connection counts as Redis being down.
   */
  failure(error: unknown): Error {
    const message = error instanceof Error ? error.message : String(error);
    let reason: string;
    if (message === 'Command timed out') {
      const within = commandTimeoutOf(this.client);
      reason = `did not answer within ${within} (a hung or overloaded server?)`;
      this.watch.down(new Error(`no answer within ${within}`));
    } else if (isConnectionFailure(error)) {
      reason = `is unreachable (${this.causeOf(error)})`;
    } else {
      reason = `answered with an error: ${message.replace(/\.+$/, '')}`;
    }
    return new Error(`RedisIdempotencyStore: ${this.where} ${reason}`, { cause: error });
  }

  /**
   * Closes the connection the store created, whatever built it (a URL, options), and the store with it:
   * used again, it refuses. Yours stays open, without the store's listeners.
   */
  async close(): Promise<void> {
    this.watch.stop();
    if (!this.owned) return;
    this.closed = true;
    const connecting = this.connecting;
    this.connecting = undefined;
    const client = await connecting?.catch(() => undefined);
    this.client = undefined;
    if (!client) return;
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

  /** Refuses a closed store or a missing address; then, as configured, a PING and the server check. */
  async startUp(): Promise<void> {
    const refused = this.refusal();
    if (refused) throw refused;
    if (this.failFastOnStartup) {
      await this.reachAtStartup(this.where, async () => {
        const client = this.client ?? (await this.connect());
        const answered = client.ping ? client.ping() : client.eval("return 'PONG'", 0);
        await answerWithin(answered, this.startupTimeoutMs, 'no answer to PING');
      });
    }
    await this.checkServerAtStartup();
    this.started = true;
  }

  /**
   * Reads the server's settings and warns of each under which it may forget keys early; at start-up
   * and on every reconnection (the server may have changed). Joins a check in flight; rejects when
   * Redis cannot be read.
   */
  checkServer(): Promise<readonly IdempotencyStoreWarning[]> {
    this.checking ??= Promise.resolve(this.open())
      .then((client) => readRedisRisks(client as RedisInfoClient))
      .then((warnings) => {
        this.warnings = Object.freeze(warnings);
        this.report(warnings);
        return this.warnings;
      })
      .finally(() => (this.checking = undefined));
    return this.checking;
  }

  /** Says what a check found when it differs from what was said before. */
  private report(warnings: readonly IdempotencyStoreWarning[]): void {
    const said = warnings.map((warning) => `${warning.code} ${warning.setting}`).join('\n');
    if (said === this.reported) return;
    this.reported = said;
    if (warnings.length === 0) {
      // Changed to nothing: risky settings were said before.
      this.logger.log(`${this.where} no longer has settings that forget completed keys early.`);
    } else if (this.started || this.serverCheck !== 'fail') {
      // 'fail' at start-up refuses to start instead (its error names the settings).
      this.logger.warn(describeRedisRisks(this.where, warnings));
    }
  }

  /** A (re)connection after start-up: the server's settings are read again, in the background. */
  private recheck(): void {
    if (!this.started || this.serverCheck === 'off') return;
    const check = () => this.checkServer().catch(() => undefined); // unreachable: the next connection checks
    // A check sent before this connection may fail with the one before it: then this one checks.
    if (this.checking) this.checking.catch(check);
    else void check();
  }

  private async checkServerAtStartup(): Promise<void> {
    if (this.serverCheck === 'off') return;
    if (this.serverCheck === 'warn') {
      // In the background: the app starts whether Redis is up or not, and a check that cannot
      // reach it says nothing (the records' own store errors will).
      this.checkServer().catch(() => undefined);
      return;
    }
    const warnings = await this.reachAtStartup(
      `${this.where} to check its settings (serverCheck: 'fail')`,
      () => answerWithin(this.checkServer(), this.startupTimeoutMs, 'no answer to INFO'),
    );
    if (warnings.length === 0) return;
    this.disconnectOwned();
    throw new IdempotencyConfigurationError(
      `RedisIdempotencyStore: ${describeRedisRisks(this.where, warnings)} The app does not start ` +
        "(serverCheck: 'fail'): fix these settings, or set serverCheck: 'warn' to start with a warning.",
    );
  }

  /** A start-up step that must reach Redis, or the app does not start (`where` says what for). */
  private async reachAtStartup<T>(where: string, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      this.disconnectOwned();
      const cause = new Error(this.causeOf(error), { cause: error });
      // Reached for the server check alone (serverCheck: 'fail', no failFastOnStartup): relaxing it is the fix.
      const option = this.failFastOnStartup ? undefined : "set serverCheck: 'warn'";
      throw new IdempotencyStoreUnavailableError('RedisIdempotencyStore', where, cause, option);
    }
  }

  /** The app will not start: a connection the store owns must not keep reconnecting behind it. */
  private disconnectOwned(): void {
    if (this.owned) this.client?.disconnect();
  }

  /** Why a command could not reach Redis: the socket's own error if reported, else the command's. */
  private causeOf(error: unknown): string {
    const message = error instanceof Error ? error.message : String(error);
    if (!isConnectionFailure(error)) return message.replace(/\.+$/, '');
    if (this.watch.lastError) return this.watch.lastError.message;
    const gone = (error as { name?: unknown })?.name === 'MaxRetriesPerRequestError';
    return gone ? 'the connection is down' : message.replace(/\.+$/, '');
  }

  /** Creates the owned client on first use (loading ioredis then, so apps without this store need none). */
  private connect(): Promise<RedisScriptClient> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    this.connecting ??= createOwnedClient(this.ownedConnection!).then((client) => {
      this.watch.watch(client, 'ready', () => this.recheck());
      return (this.client = client);
    });
    return this.connecting;
  }

  /** Why an owned connection cannot be opened: the store was closed, or given nothing to connect to. */
  private refusal(): Error | undefined {
    if (this.closed) return new IdempotencyStoreClosedError('RedisIdempotencyStore', this.address);
    if (this.owned && isMissingConnection(this.ownedConnection)) {
      return missingConnectionError(
        'RedisIdempotencyStore',
        this.ownedConnection,
        'REDIS_URL',
        "Give a redis:// URL, ioredis options ({ host, port }) or an ioredis client; for ioredis's default, " +
          "localhost:6379, say so: new RedisIdempotencyStore({ host: 'localhost' }).",
      );
    }
    return undefined;
  }
}

/** What {@link RedisIdempotencyStoreOptions.serverCheck} does with a risky server. */
export type RedisServerCheck = 'warn' | 'fail' | 'off';

/**
 * ioredis settings for an idempotency store: a command fails within one reconnection attempt or about
 * two `commandTimeout`s (the record fails closed, the client keeps reconnecting), and auto-pipelining
 * sends a batch's claims in one write. Applied to the store's own connections; spread them into yours:
 *
 * @example
 * ```ts
 * const redis = new Redis(process.env.REDIS_URL!, { ...recommendedIoRedisOptions, tls: {} });
 * ```
 */
export const recommendedIoRedisOptions = Object.freeze({
  maxRetriesPerRequest: 1,
  commandTimeout: 2_000,
  enableAutoPipelining: true,
} satisfies RedisOptions);

/** What the store calls on an ioredis `Redis` or `Cluster`, structurally. */
export interface RedisScriptClient {
  /** Claims: `SET key token [PX ms] NX GET`, answering the value the key held (or null). */
  set(key: string | Buffer, value: string, nx: 'NX', get: 'GET'): Promise<string | null>;
  set(
    key: string | Buffer,
    value: string,
    px: 'PX',
    milliseconds: number,
    nx: 'NX',
    get: 'GET',
  ): Promise<string | null>;
  evalsha(sha: string, numKeys: number, ...args: Array<string | Buffer | number>): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: Array<string | Buffer | number>): Promise<unknown>;
  /** ioredis's connection state (`wait`, `ready`, `end`, ...). */
  readonly status: string;
  quit(): Promise<unknown>;
  disconnect(): void;
  /** Used by the start-up check when present (an EVAL stands in otherwise). */
  ping?(): Promise<unknown>;
  /** `true` on an ioredis `Cluster`: the batch methods then send one script per hash slot. */
  readonly isCluster?: boolean;
  once(event: 'end', listener: () => void): unknown;
}

/** ioredis connection options (untyped here, so ioredis stays optional). */
export type IoRedisOptions = Record<string, any>;

/** Where the store connects, for errors: the URL without credentials, or host and port. */
function describeAddress(connection: RedisScriptClient | string | IoRedisOptions | undefined): string {
  if (typeof connection === 'string') return connection.replace(/\/\/[^@/]*@/, '//***@');
  const { options, startupNodes } = (connection ?? {}) as {
    options?: IoRedisOptions;
    startupNodes?: Array<{ host?: string; port?: number } | string | number>;
  };
  if (Array.isArray(startupNodes)) {
    const nodes = startupNodes.map((node) =>
      typeof node === 'object' ? `${node.host ?? 'localhost'}:${node.port ?? 6379}` : String(node),
    );
    return `the cluster ${nodes.join(', ')}`;
  }
  const settings = (options ?? connection ?? {}) as IoRedisOptions;
  if (typeof settings.path === 'string') return settings.path;
  return `${settings.host ?? 'localhost'}:${settings.port ?? 6379}`;
}

/**
 * How long the client waits for a reply, as the timeout error words it: a Cluster keeps the
 * setting in its `redisOptions` (the options of the connection to each node), a Redis at the top.
 */
function commandTimeoutOf(client: RedisScriptClient | undefined): string {
  const options = (client as { options?: IoRedisOptions } | undefined)?.options;
  const timeout: unknown = options?.commandTimeout ?? options?.redisOptions?.commandTimeout;
  return typeof timeout === 'number' ? `${timeout} ms` : 'its commandTimeout';
}

export const loadIoRedis = optionalPeer(
  'ioredis',
  'RedisIdempotencyStore (connecting from a URL or options)',
  () => import('ioredis'),
);

async function createOwnedClient(connection: string | IoRedisOptions): Promise<RedisScriptClient> {
  const { Redis } = await loadIoRedis();
  // lazyConnect: the socket opens with the first command, not before. disconnectTimeout: the store
  // disconnects its client only when it is not ready (never connected, or reconnecting to a server
  // that is gone), with nothing to flush; ioredis's default keeps a 2 s timer per disconnect, which
  // never clears when the socket had already closed: a refused start-up or a close during an outage
  // kept the process alive 2 s longer (and Jest's worker past its exit).
  const defaults: RedisOptions = { ...recommendedIoRedisOptions, lazyConnect: true, disconnectTimeout: 0 };
  return typeof connection === 'string'
    ? new Redis(connection, defaults)
    : new Redis({ ...defaults, ...(connection as RedisOptions) });
}

/** Options of {@link RedisIdempotencyStore}. */
export interface RedisIdempotencyStoreOptions {
  /** Store each key as a 12-byte digest: less Redis memory, keys no longer readable. Default `false`. */
  compactKeys?: boolean;
  /**
   * A PING must answer within `startupTimeoutMs` at start-up, or the app does not start. Default
   * `false`: records fail closed until Redis answers, then succeed without a restart.
   */
  failFastOnStartup?: boolean;
  /** How long the start-up checks wait for Redis, in milliseconds. Default 5 000. */
  startupTimeoutMs?: number;
  /**
   * Look for server settings under which Redis forgets completed keys early (an evicting
   * `maxmemory-policy`, no persistence), at start-up and on every reconnection: `'warn'` (default,
   * logged and listed in `warnings`), `'fail'` (the app does not start), `'off'`.
   */
  serverCheck?: RedisServerCheck;
}
