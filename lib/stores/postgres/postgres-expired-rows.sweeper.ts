import { Logger } from '@nestjs/common';
import { IdempotencyConfigurationError } from '../../common/sqs-idempotency.error';

/**
 * Deletes expired rows in the background (they are harmless, this gives the space back), never in
 * the claims' way: short batches that skip locked rows, then a pause (the first one random, so
 * instances do not sweep in step), on an unref'd timer.
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
  /** Off (`sweeper: false`): `runOnce()` alone sweeps. */
  private readonly inBackground: boolean;
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
    options: PostgresSweeperOptions | false = {},
    private readonly logger: Logger,
  ) {
    this.inBackground = options !== false;
    const { intervalMs, batchSize } = options || {};
    this.intervalMs = intervalMs ?? DEFAULT_INTERVAL_MS;
    this.batchSize = batchSize ?? DEFAULT_BATCH_SIZE;
    if (!(this.intervalMs > 0 && Number.isFinite(this.intervalMs))) {
      throw new IdempotencyConfigurationError(
        `PostgresIdempotencyStore: sweeper.intervalMs must be a positive number of milliseconds, got ${intervalMs}.`,
      );
    }
    if (!(Number.isInteger(this.batchSize) && this.batchSize > 0)) {
      throw new IdempotencyConfigurationError(
        `PostgresIdempotencyStore: sweeper.batchSize must be a positive integer, got ${batchSize}.`,
      );
    }
  }

  /** Schedules the passes in the background (once; later calls do nothing, nor any after `stop`). */
  start(): void {
    if (this.started || this.stopped || !this.inBackground) return;
    this.started = true;
    this.schedule(this.intervalMs * (0.5 + Math.random() / 2));
  }

  /** One pass now (joined if running): batches until one comes back short; resolves with the rows deleted. */
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
