import { SqsReceiveBackoff } from './sqs-receive.backoff';

describe('SqsReceiveBackoff', () => {
  afterEach(() => jest.useRealTimers());

  it('doubles the pause per consecutive failure, within [ceiling / 2, ceiling], up to the maximum', () => {
    const low = new SqsReceiveBackoff({ initialMs: 100, maxMs: 1000, random: () => 0 });
    const high = new SqsReceiveBackoff({ initialMs: 100, maxMs: 1000, random: () => 0.999999 });
    const lows = [1, 2, 3, 4, 5, 6].map(() => low.failed());
    const highs = [1, 2, 3, 4, 5, 6].map(() => high.failed());
    expect(lows).toEqual([50, 100, 200, 400, 500, 500]);
    expect(highs).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it('does not pause while healthy, and drops back to no pause after a success', async () => {
    jest.useFakeTimers();
    const backoff = new SqsReceiveBackoff({ initialMs: 100, random: () => 0 });
    let done = false;
    await backoff.wait().then(() => (done = true));
    expect(done).toBe(true);

    backoff.failed();
    backoff.failed();
    expect(backoff.consecutiveFailures).toBe(2);
    done = false;
    const waiting = backoff.wait().then(() => (done = true));
    await jest.advanceTimersByTimeAsync(99);
    expect(done).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await waiting;
    expect(done).toBe(true);

    expect(backoff.succeeded()).toBe(2);
    expect(backoff.consecutiveFailures).toBe(0);
    done = false;
    await backoff.wait().then(() => (done = true));
    expect(done).toBe(true);
  });

  it('ends a pause at once when interrupted', async () => {
    jest.useFakeTimers();
    const backoff = new SqsReceiveBackoff({ initialMs: 60_000, random: () => 0 });
    backoff.failed();
    let done = false;
    const waiting = backoff.wait().then(() => (done = true));
    await jest.advanceTimersByTimeAsync(10);
    expect(done).toBe(false);
    backoff.interrupt();
    await waiting;
    expect(done).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
  });
});
