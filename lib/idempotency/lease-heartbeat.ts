import type { IdempotencyStore } from '../stores/idempotency-store.interface';
import { extendIn } from './store-calls';

/** What the heartbeat reports; called at most once each per claim, and never allowed to throw out. */
export interface LeaseHeartbeatEvents {
  /** The store refused a renewal: another attempt owns the key, or the lease expired first. */
  lost(): void;
  /** The store failed to answer a renewal (or answered outside the protocol). */
  failed(error: unknown): void;
}

/**
 * Keeps a claim alive while a long handler runs: every third of the lease it asks the store to
 * extend the lease, so the claim survives handlers slower than `inProgressTtl` without making the
 * lease of a crashed worker any longer. A refused extension means the claim is already lost; the
 * heartbeat stops and reports it once.
 *
 * Two things it must never do:
 * - outlive the host's deadline: on Lambda the attempt is killed at its deadline, so a renewal
 *   reaches at most that far (a lease past it only keeps redeliveries waiting for a dead attempt);
 * - throw from its timer: an exception there is uncaught and kills the process, so the store call
 *   goes through `extendIn` (every misbehaviour is a rejection) and the reports are fenced too.
 *
 * It renews on a timer, so it only runs while the event loop does: a handler that blocks the loop
 * (synchronous CPU work) longer than the lease loses its claim whatever the heartbeat.
 */
export class LeaseHeartbeat {
  /** True once the store refused an extension. */
  lost = false;
  private readonly timer: ReturnType<typeof setInterval>;

  /**
   * @param deadline `performance.now()` time at which the host kills the attempt (`Infinity`: none).
   */
  constructor(
    private readonly store: IdempotencyStore,
    private readonly storeKey: string,
    private readonly lease: number,
    private readonly token: string,
    private readonly deadline: number,
    private readonly events: LeaseHeartbeatEvents,
  ) {
    this.timer = setInterval(() => this.beat(), Math.max(1, Math.floor(lease / 3)));
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private beat(): void {
    const left = this.deadline - performance.now();
    if (left < 1) {
      // Nothing left to renew before the host ends the attempt: the lease runs out with it.
      this.stop();
      return;
    }
    extendIn(this.store, this.storeKey, Math.min(this.lease, Math.floor(left)), this.token).then(
      (owned) => {
        if (owned || this.lost) return;
        this.lost = true;
        this.stop();
        report(() => this.events.lost());
      },
      (error: unknown) => report(() => this.events.failed(error)),
    );
  }
}

/** Runs a report; a throwing logger or stats sink must not become an unhandled rejection. */
function report(callback: () => void): void {
  try {
    callback();
  } catch {
    // Nothing left to tell it to: the record's own outcome still settles normally.
  }
}
