import type { Redis } from 'ioredis';
import type { ChaosProducer } from './chaos-producer';

/**
 * Producer retries sent after the event was applied: the duplicate that arrives late, once the
 * first copy is long acked. Checked against the ledger, so each one is really "after completion".
 */
export class LateRetries {
  private readonly pending = new Map<string, string>();
  private flushing: Promise<number> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly ledger: Redis,
    private readonly ledgerKey: string,
    private readonly producer: ChaosProducer,
  ) {
    this.timer = setInterval(() => void this.flush().catch(() => undefined), 250);
  }

  close(): void {
    clearInterval(this.timer);
  }

  add(events: ReadonlyArray<{ id: string; body: string }>): void {
    for (const { id, body } of events) this.pending.set(id, body);
  }

  /** Sends the retries of the events applied by now; resolves how many are still pending. */
  flush(): Promise<number> {
    this.flushing ??= this.sendApplied().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async sendApplied(): Promise<number> {
    const ids = [...this.pending.keys()];
    if (ids.length === 0) return 0;
    const counts = await this.ledger.hmget(this.ledgerKey, ...ids);
    const ready = ids.filter((_, i) => counts[i] !== null);
    await this.producer.send(
      ready.map((id) => ({ body: this.pending.get(id)!, kind: 'lateRetries' as const })),
    );
    for (const id of ready) this.pending.delete(id);
    return this.pending.size;
  }
}
