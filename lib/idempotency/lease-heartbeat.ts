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
 * Keeps a claim alive while a long handler runs by extending the lease every third of it; a refused
 * extension means the claim is lost, reported once. It never renews past the host's deadline (a
 * Lambda is killed there) and never throws from its timer (that would kill the process). Once
 * stopped it reports nothing: an extension still in flight may be answered after the completion
 * (calls overtake each other over parallel HTTP or a connection pool), and its refusal or failure
 * says nothing about a handler that has finished.
 */
export class LeaseHeartbeat {
  /** True once the store refused an extension. */
  lost = false;
  /** True once the handler settled (`stop()`): late answers are dropped. */
  private stopped = false;
  private readonly timer: ReturnType<typeof setInterval>;

  /** @param deadline `performance.now()` time at which the host kills the attempt (`Infinity`: none). */
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

  /** The handler settled: no more renewals, and no report from one still in flight. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private beat(): void {
    const left = this.deadline - performance.now();
    if (left < 1) {
      // Nothing left to renew before the host ends the attempt: the lease runs out with it (the
      // handler still runs, so an answer in flight is still reported).
      clearInterval(this.timer);
      return;
    }
    extendIn(this.store, this.storeKey, Math.min(this.lease, Math.floor(left)), this.token).then(
      (owned) => {
        if (owned || this.lost || this.stopped) return;
        this.lost = true;
        clearInterval(this.timer);
        report(() => this.events.lost());
      },
      (error: unknown) => {
        if (!this.stopped) report(() => this.events.failed(error));
      },
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
