import { AcquireResult } from '../stores/idempotency-store.interface';
import type { IdempotencyPolicy } from './idempotency-policy';
import { RecordObserver, RecordObservers } from './record-observer';

/** An observer that writes down each call it gets. */
class Recording implements RecordObserver {
  readonly calls: string[] = [];
  countCall(eventType: string, handler: string, status: string): void {
    this.calls.push(`call ${eventType} ${handler} ${status}`);
  }
  recordEnded(queue: string): void {
    this.calls.push(`ended ${queue}`);
  }
  countClaimEvent(policy: IdempotencyPolicy, event: string): void {
    this.calls.push(`claim event ${policy.handlerName} ${event}`);
  }
  claimAnswered(durationMs: number): void {
    this.calls.push(`answered ${durationMs}`);
  }
  claimFailed(): void {
    this.calls.push('failed');
  }
}

describe('RecordObservers', () => {
  it('has no current observer until one is installed: the hot path then skips every call', () => {
    expect(new RecordObservers().current).toBeUndefined();
  });

  it('hands the calls to the one observer installed, itself, installed once however often it is added', () => {
    const observers = new RecordObservers();
    const counters = new Recording();
    observers.add(counters);
    observers.add(counters);
    expect(observers.current).toBe(counters);
    expect(observers.find(Recording)).toBe(counters);
  });

  it('hands each call to every observer installed, in the order installed', () => {
    const observers = new RecordObservers();
    const [first, second] = [new Recording(), new Recording()];
    observers.add(first);
    observers.add(second);
    const current = observers.current!;
    current.countCall('order_created', 'Orders.on', 'OK', undefined, 1);
    current.recordEnded('orders', { messageId: 'm', status: 'OK', durationMs: 1 }, 1, false);
    current.countClaimEvent({ handlerName: 'Orders.on' } as IdempotencyPolicy, 'leases_lost');
    current.claimAnswered(2, AcquireResult.ACQUIRED);
    current.claimFailed();
    const expected = [
      'call order_created Orders.on OK',
      'ended orders',
      'claim event Orders.on leases_lost',
      'answered 2',
      'failed',
    ];
    expect(first.calls).toEqual(expected);
    expect(second.calls).toEqual(expected);
    expect(observers.find(Recording)).toBe(first);
  });
});
