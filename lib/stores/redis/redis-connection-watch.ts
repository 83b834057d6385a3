import { Logger } from '@nestjs/common';
import { ClientEvents, listenToClient } from '../shared-client-listeners';

/**
 * What the store says when Redis is not there: every client gets an `error` listener (so ioredis
 * prints no stacks), one line when Redis goes and one when it comes back; a failed command becomes
 * an error naming the store, the address and the cause; each (re)connection re-reads the server.
 */
export class RedisConnectionWatch {
  private readonly logger: Logger;
  private lastError: Error | undefined;
  private downSince: number | undefined;
  private leave: () => void = () => undefined;
  private stopped = false;

  constructor(
    /** Where the store connects, for people: a URL without credentials, or host:port. */
    readonly address: string,
    /** Called on every `ready` of the client: a (re)connection. */
    private readonly onReady: () => void = () => undefined,
    context = 'RedisIdempotencyStore',
  ) {
    this.logger = new Logger(context);
  }

  /** Whether the connection is known to be down (a success then logs the recovery). */
  get isDown(): boolean {
    return this.downSince !== undefined;
  }

  /** Listens to `client`'s errors and (re)connections until `stop()`. */
  watch(client: ClientEvents): void {
    this.leave = listenToClient(client, {
      error: (error: Error) => this.unreachable(error),
      ready: () => this.ready(),
    });
  }

  /** The store is closing: what follows is on purpose, not an outage; its listeners leave the client. */
  stop(): void {
    this.stopped = true;
    this.leave();
  }

  /** A command was answered: Redis is back, if it was down. */
  answered(): void {
    if (this.downSince === undefined || this.stopped) return;
    const seconds = ((Date.now() - this.downSince) / 1000).toFixed(1);
    this.downSince = undefined;
    this.lastError = undefined;
    this.logger.log(
      `Redis at ${this.address} answers again (after ${seconds} s); idempotency claims work again.`,
    );
  }

  /** The error a failed command becomes (ioredis's as `cause`); a timeout on a live connection counts as down. */
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

  /** Why a command could not reach Redis: the socket's own error if reported, else the command's. */
  causeOf(error: unknown): string {
    const message = error instanceof Error ? error.message : String(error);
    if (!isConnectionError(error, message)) return message.replace(/\.+$/, '');
    return this.lastError?.message ?? describeConnectionError(error, message);
  }

  private ready(): void {
    if (this.stopped) return;
    this.answered();
    this.onReady();
  }

  private unreachable(error: Error): void {
    this.lastError = error;
    if (this.downSince !== undefined || this.stopped) return;
    this.downSince = Date.now();
    this.logger.warn(
      `Redis at ${this.address} is unreachable (${error.message}): idempotency claims fail until it answers ` +
        "(records fail closed, or run without dedup with onStoreError: 'process'). Reconnecting in the background.",
    );
  }
}

/** ioredis's ways of saying "no connection". */
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

/** When no socket error was reported, what ioredis's error itself tells. */
function describeConnectionError(error: unknown, message: string): string {
  if ((error as { name?: unknown })?.name === 'MaxRetriesPerRequestError') return 'the connection is down';
  return message.replace(/\.+$/, '');
}
