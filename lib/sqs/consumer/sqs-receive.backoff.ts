/**
 * The pause before the next receive after failed receives: doubling to a ceiling, with jitter so a
 * fleet does not retry in lockstep, back to none after a success, cut short by a stop.
 */
export interface SqsReceiveBackoffOptions {
  /** Pause after the first failure, in milliseconds. Default 250. */
  initialMs?: number;
  /** Longest pause, in milliseconds. Default 20 000. */
  maxMs?: number;
  /** Random source in [0, 1), for the jitter. Default `Math.random`. */
  random?: () => number;
}

export class SqsReceiveBackoff {
  private failures = 0;
  private delayMs = 0;
  private pending: { timer: NodeJS.Timeout; resolve: () => void } | undefined;

  constructor(private readonly options: SqsReceiveBackoffOptions = {}) {}

  /** Consecutive failed receives. */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /** Records a failed receive; returns the pause before the next one. */
  failed(): number {
    this.failures++;
    const { initialMs = 250, maxMs = 20_000, random = Math.random } = this.options;
    const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(this.failures - 1, 30));
    // "Equal jitter": at least half the ceiling, so a retry never comes straight back.
    this.delayMs = Math.round(ceiling / 2 + (random() * ceiling) / 2);
    return this.delayMs;
  }

  /** Records a successful receive; returns how many failures preceded it. */
  succeeded(): number {
    const failures = this.failures;
    this.failures = 0;
    this.delayMs = 0;
    return failures;
  }

  /** Waits out the current pause (none when healthy). */
  wait(): Promise<void> {
    if (this.delayMs === 0) return Promise.resolve();
    this.interrupt();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending = undefined;
        resolve();
      }, this.delayMs);
      this.pending = { timer, resolve };
    });
  }

  /** Ends a pause in progress now (the consumer is stopping). */
  interrupt(): void {
    if (this.pending === undefined) return;
    clearTimeout(this.pending.timer);
    const { resolve } = this.pending;
    this.pending = undefined;
    resolve();
  }
}
