import type { IdempotencyStore } from '../stores/idempotency-store.interface';

/**
 * Keeps a claim alive while a long handler runs: every third of the lease it asks the store to
 * extend the lease, so the claim survives handlers slower than `inProgressTtl` without making the
 * lease of a crashed worker any longer. A refused extension means the claim is already lost; the
 * heartbeat stops and reports it once.
 */
export class LeaseHeartbeat {
  /** True once the store refused an extension. */
  lost = false;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    store: IdempotencyStore & Required<Pick<IdempotencyStore, 'extend'>>,
    storeKey: string,
    lease: number,
    token: string,
    onLost: () => void,
    onError: (error: unknown) => void,
  ) {
    this.timer = setInterval(
      () => {
        store.extend(storeKey, lease, token).then((owned) => {
          if (owned === false && !this.lost) {
            this.lost = true;
            this.stop();
            onLost();
          }
        }, onError);
      },
      Math.max(1, Math.floor(lease / 3)),
    );
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
