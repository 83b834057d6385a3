import type { Logger } from '@nestjs/common';
import { ClientEvents, listenToClient } from './shared-client-listeners';

/**
 * What a store says when its backend goes away: one warning when it goes, one line when it answers
 * again, nothing between. Its `error` listener also keeps a broken connection from crashing the process.
 */
export class ConnectionWatch {
  /** The error that last reported the backend unreachable, until it answers again. */
  lastError: Error | undefined;
  private downSince: number | undefined;
  private stopped = false;
  private leave: () => void = () => undefined;

  constructor(
    private readonly logger: Pick<Logger, 'warn' | 'log'>,
    /** The backend as the lines name it, e.g. `Redis at 127.0.0.1:6379`. */
    private readonly where: () => string,
    /** The warning when it goes, after `where()`. */
    private readonly wentAway: (error: Error) => string,
  ) {}

  /** Listens to `client`'s errors and its `connected` event (a new connection) until `stop()`. */
  watch(client: unknown, connected: string, onConnected: () => void = () => undefined): void {
    this.leave = listenToClient(client as ClientEvents, {
      error: (error: Error) => this.down(error),
      [connected]: () => {
        if (this.stopped) return;
        this.answered();
        onConnected();
      },
    });
  }

  /** The store is closing: what follows is on purpose, not an outage; its listeners leave the client. */
  stop(): void {
    this.stopped = true;
    this.leave();
  }

  /** The backend could not be reached: warns once, until it answers again. */
  down(error: Error): void {
    this.lastError = error;
    if (this.downSince !== undefined || this.stopped) return;
    this.downSince = Date.now();
    this.logger.warn(this.where() + this.wentAway(error));
  }

  /** The backend answered: an outage reported is over. */
  answered(): void {
    if (this.downSince === undefined || this.stopped) return;
    const seconds = ((Date.now() - this.downSince) / 1000).toFixed(1);
    this.downSince = undefined;
    this.lastError = undefined;
    this.logger.log(`${this.where()} answers again (after ${seconds} s); idempotency claims work again.`);
  }
}

/** What a record does while the backend is away, as the warnings say it. */
export const WHILE_AWAY =
  "idempotency claims fail until it answers (records fail closed, or run without dedup with onStoreError: 'process')";

/**
 * Whether `error` says the connection failed, not the command: Node's socket codes, pg's connection
 * (08...) and shutdown (57P01-3) codes, and the words of ioredis and pg. Read by shape, not
 * `instanceof Error`: a socket's errors come from Node's own realm, not the caller's under a VM
 * sandbox such as Jest's.
 */
export function isConnectionFailure(error: unknown): boolean {
  const { name, code, message = String(error) } = (error ?? {}) as Record<string, unknown>;
  return (
    name === 'MaxRetriesPerRequestError' ||
    (typeof code === 'string' &&
      /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|EPIPE|08...|57P0[123])$/.test(
        code,
      )) ||
    (typeof message === 'string' &&
      /^(Connection is closed\.$|Stream isn't writeable|Connection terminated)|timeout exceeded when trying to connect|Client has encountered a connection error/.test(
        message,
      ))
  );
}
