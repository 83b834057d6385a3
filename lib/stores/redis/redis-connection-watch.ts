import { Logger } from '@nestjs/common';

/**
 * What the Redis store says when Redis is not there, to the operator (the log) and in each record's
 * failure reason.
 *
 * - A connection the store owns (created from a URL or options) gets an `error` listener, so ioredis
 *   never prints its `[ioredis] Unhandled error event` stack (twice a second while Redis is down):
 *   instead one line when Redis becomes unreachable, naming the address and the cause, and one
 *   when it answers again. A client you pass in is yours: the store adds no listener to it.
 * - Whoever owns the client, a failed command becomes an error that names the store, the address
 *   and the cause ("connect ECONNREFUSED ...", "no answer within 2000 ms"), instead of ioredis's
 *   "Reached the max retries per request limit (which is 1)", which is about an option the
 *   library chose, not about Redis.
 */
export class RedisConnectionWatch {
  private readonly logger = new Logger('RedisIdempotencyStore');
  private lastError: Error | undefined;
  private downSince: number | undefined;
  /** Only a connection the store owns is reported in the log; a client you pass in is yours. */
  private reporting = false;
  private stopped = false;

  constructor(
    /** Where the store connects, for people: a URL without credentials, or host:port. */
    readonly address: string,
  ) {}

  /** Whether the owned connection is known to be down (a success then logs the recovery). */
  get isDown(): boolean {
    return this.downSince !== undefined;
  }

  /** Listens to a connection the store owns. */
  watch(client: ConnectionEvents): void {
    this.reporting = true;
    client.on('error', (error: Error) => this.unreachable(error));
    client.on('ready', () => this.answered());
  }

  /** The store is closing its connection: what follows is on purpose, not an outage. */
  stop(): void {
    this.stopped = true;
  }

  /** A command was answered: Redis is back, if it was down. */
  answered(): void {
    if (this.downSince === undefined || this.stopped || !this.reporting) return;
    const seconds = ((Date.now() - this.downSince) / 1000).toFixed(1);
    this.downSince = undefined;
    this.lastError = undefined;
    this.logger.log(
      `Redis at ${this.address} answers again (after ${seconds} s); idempotency claims work again.`,
    );
  }

  /**
   * The error a failed command becomes: the store, the address and the cause, with ioredis's own
   * error as `cause`. A command that timed out on a connection that is up also counts as "down".
   */
  explain(error: unknown, commandTimeoutMs: number | undefined): Error {
    const message = error instanceof Error ? error.message : String(error);
    let reason: string;
    if (message === 'Command timed out') {
      reason = `did not answer within ${commandTimeoutMs ?? 'the commandTimeout of'} ms (a hung or overloaded server?)`;
      this.unreachable(new Error(`no answer within ${commandTimeoutMs} ms`));
    } else if (isConnectionError(error, message)) {
      reason = `is unreachable (${this.causeOf(error)})`;
    } else {
      reason = `answered with an error: ${message.replace(/\.+$/, '')}`;
    }
    return new Error(`RedisIdempotencyStore: Redis at ${this.address} ${reason}`, { cause: error });
  }

  /**
   * Why a command could not reach Redis: the socket's own error when the store watches the
   * connection (`connect ECONNREFUSED 10.0.0.5:6379`), else what the command's error tells.
   */
  causeOf(error: unknown): string {
    const message = error instanceof Error ? error.message : String(error);
    if (!isConnectionError(error, message)) return message.replace(/\.+$/, '');
    return this.lastError?.message ?? describeConnectionError(error, message);
  }

  private unreachable(error: Error): void {
    if (!this.reporting) return;
    this.lastError = error;
    if (this.downSince !== undefined || this.stopped) return;
    this.downSince = Date.now();
    this.logger.warn(
      `Redis at ${this.address} is unreachable (${error.message}): idempotency claims fail until it answers ` +
        "(records fail closed, or run without dedup with onStoreError: 'process'). Reconnecting in the background.",
    );
  }
}

/** The events of an ioredis client the watch listens to. */
export interface ConnectionEvents {
  on(event: 'error' | 'ready', listener: (...args: any[]) => void): unknown;
}

/**
 * ioredis's ways of saying "no connection": a command that waited through `maxRetriesPerRequest`
 * reconnection attempts, a closed connection, an offline queue turned off, or a socket error.
 */
function isConnectionError(error: unknown, message: string): boolean {
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
  return (
    name === 'MaxRetriesPerRequestError' ||
    message === 'Connection is closed.' ||
    message.startsWith("Stream isn't writeable") ||
    (typeof code === 'string' &&
      /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|EPIPE)$/.test(code))
  );
}

/** For a client the store does not watch, what ioredis's error itself tells. */
function describeConnectionError(error: unknown, message: string): string {
  if ((error as { name?: unknown })?.name === 'MaxRetriesPerRequestError') return 'the connection is down';
  return message.replace(/\.+$/, '');
}
