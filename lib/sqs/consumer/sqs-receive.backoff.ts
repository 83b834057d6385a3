import { setTimeout as sleep } from 'node:timers/promises';

/** Pause after the first failed receive, and the longest pause, in milliseconds. */
const INITIAL_MS = 250;
const MAX_MS = 20_000;

/**
 * The pause before the next receive after failed receives: doubling to a ceiling, with jitter so a
 * fleet does not retry in lockstep, back to none after a success, cut short by a stop.
 */
export class SqsReceiveBackoff {
  private failures = 0;
  private delayMs = 0;
  private pause: AbortController | undefined;

  /** Consecutive failed receives. */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /** Records a failed receive; returns the pause before the next one. */
  failed(): number {
    this.failures++;
    const ceiling = Math.min(MAX_MS, INITIAL_MS * 2 ** Math.min(this.failures - 1, 30));
    // "Equal jitter": at least half the ceiling, so a retry never comes straight back.
    this.delayMs = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
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
  async wait(): Promise<void> {
    if (this.delayMs === 0) return;
    this.interrupt();
    this.pause = new AbortController();
    await sleep(this.delayMs, undefined, { signal: this.pause.signal }).catch(() => undefined);
  }

  /** Ends a pause in progress now (the consumer is stopping). */
  interrupt(): void {
    this.pause?.abort();
  }
}
