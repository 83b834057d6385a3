import { Logger } from '@nestjs/common';

/**
 * Deletes expired rows of the Postgres store in the background, so the table holds about one
 * dedup window of keys instead of every key ever seen. Expired rows are already harmless (every
 * statement treats them as absent, and a claim takes one over in place); this only gives the space
 * back.
 *
 * It must never get in the way of the claims: each batch is one short statement deleting at most
 * `batchSize` rows, locking only those and skipping rows another transaction holds (`FOR UPDATE
 * SKIP LOCKED`), so it neither waits for a claim nor makes one wait for long, and instances
 * sweeping the same table at once share the work instead of queueing. A pass runs batches back to
 * back while they come back full, then waits `intervalMs` (the first pass waits a random part of
 * it, so instances started together do not sweep in step). The timer is unref'd: it never keeps a
 * process (or a test run) alive. A failed pass is logged once, then again only after a success.
 */

/** Options of the background sweep. */
export interface PostgresSweeperOptions {
  /** Time between two passes, in milliseconds. Default 60 000. */
  intervalMs?: number;
  /** Rows deleted per statement. Default 1 000. */
  batchSize?: number;
}

const DEFAULT_INTERVAL_MS = 60_000;
const DEFAULT_BATCH_SIZE = 1_000;

export class PostgresExpiredRowsSweeper {
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private started = false;
  private stopped = false;
  private failing = false;

  constructor(
    /** Deletes up to `batchSize` expired rows and returns how many it deleted. */
    private readonly sweepBatch: (batchSize: number) => Promise<number>,
    options: PostgresSweeperOptions,
    private readonly logger: Logger,
  ) {
    this.intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
    this.batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    if (!(this.intervalMs > 0 && Number.isFinite(this.intervalMs))) {
      throw new RangeError(
        `PostgresIdempotencyStore: sweeper.intervalMs must be a positive number of milliseconds, got ${options.intervalMs}.`,
      );
    }
    if (!(Number.isInteger(this.batchSize) && this.batchSize > 0)) {
      throw new RangeError(
        `PostgresIdempotencyStore: sweeper.batchSize must be a positive integer, got ${options.batchSize}.`,
      );
    }
  }

  /** Schedules the passes (once; later calls do nothing, and nothing after `stop`). */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.schedule(this.intervalMs * (0.5 + Math.random() / 2));
  }

  /**
   * One pass now: batches until one deletes fewer than `batchSize` rows. Resolves with the rows
   * deleted; rejects with the database's error. A pass already running is joined, not doubled.
   */
  runOnce(): Promise<number> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Stops the passes and waits for a running batch to end (before its pool is closed). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    try {
      const deleted = await this.runOnce();
      if (this.failing) this.logger.log(`Sweeping expired rows works again (${deleted} deleted).`);
      this.failing = false;
    } catch (error) {
      if (!this.failing) {
        this.logger.warn(
          `Sweeping expired rows failed (${error instanceof Error ? error.message : String(error)}); ` +
            `retrying every ${this.intervalMs} ms. Claims ignore expired rows meanwhile.`,
        );
      }
      this.failing = true;
    }
    if (!this.stopped) this.schedule(this.intervalMs);
  }

  private async pass(): Promise<number> {
    let total = 0;
    let deleted: number;
    do {
      deleted = await this.sweepBatch(this.batchSize);
      total += deleted;
    } while (deleted === this.batchSize && !this.stopped);
    return total;
  }
}
