import type { Logger } from '@nestjs/common';
import { ClientEvents, listenToClient } from '../shared-client-listeners';

/**
 * Listens on every pool the store talks through: a broken idle connection emits `error`, which with
 * no listener kills the process. One line when the database goes, one when a connection is made again.
 */
export class PostgresConnectionWatch {
  private downSince: number | undefined;
  private stopped = false;
  private leave: () => void = () => undefined;

  constructor(
    /** Where the store connects, for people (no password). */
    private readonly where: () => string,
    private readonly logger: Pick<Logger, 'warn' | 'log'>,
  ) {}

  /** Listens to a pool's lost connections and new ones until `stop()`. */
  watch(pool: unknown): void {
    this.leave = listenToClient(pool as ClientEvents, {
      error: (error: Error) => this.lost(error),
      connect: () => this.answered(),
    });
  }

  /** A statement failed: a connection-level failure counts as the database being down. */
  failed(error: unknown): void {
    if (isConnectionFailure(error)) this.lost(error as Error);
  }

  /** The store is closing: what follows is on purpose; its listeners leave the pool. */
  stop(): void {
    this.stopped = true;
    this.leave();
  }

  private lost(error: Error): void {
    if (this.downSince !== undefined || this.stopped) return;
    this.downSince = Date.now();
    const code = (error as { code?: unknown }).code;
    this.logger.warn(
      `${this.where()}: a database connection failed (${error.message}${typeof code === 'string' ? `, ${code}` : ''}): ` +
        'idempotency claims fail until the database answers (records fail closed, or run without dedup with ' +
        "onStoreError: 'process'); the pool reconnects on the next statement.",
    );
  }

  private answered(): void {
    if (this.downSince === undefined || this.stopped) return;
    const seconds = ((Date.now() - this.downSince) / 1000).toFixed(1);
    this.downSince = undefined;
    this.logger.log(`${this.where()} answers again (after ${seconds} s); idempotency claims work again.`);
  }
}

/** `pg`'s ways of saying the connection, not the statement, failed. */
function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    /^(08...|57P0[123]|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|EPIPE)$/.test(code)
  ) {
    return true;
  }
  return /^Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(
    error.message,
  );
}
