import { SqsReceiveBackoff } from './sqs-receive.backoff';

describe('SqsReceiveBackoff', () => {
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('doubles the pause per consecutive failure from 250 ms, within [ceiling / 2, ceiling], up to 20 s', () => {
    const pauses = (random: number) => {
      jest.spyOn(Math, 'random').mockReturnValue(random);
      const backoff = new SqsReceiveBackoff();
      return [1, 2, 3, 4, 5, 6, 7, 8, 9].map(() => backoff.failed());
    };
    expect(pauses(0)).toEqual([125, 250, 500, 1_000, 2_000, 4_000, 8_000, 10_000, 10_000]);
    expect(pauses(0.999999)).toEqual([250, 500, 1_000, 2_000, 4_000, 8_000, 16_000, 20_000, 20_000]);
  });

  it('does not pause while healthy, and drops back to no pause after a success', async () => {
    jest.useFakeTimers();
    jest.spyOn(Math, 'random').mockReturnValue(0);
    const backoff = new SqsReceiveBackoff();
    let done = false;
    await backoff.wait().then(() => (done = true));
    expect(done).toBe(true);

    backoff.failed();
    backoff.failed();
    expect(backoff.consecutiveFailures).toBe(2);
    done = false;
    const waiting = backoff.wait().then(() => (done = true));
    await jest.advanceTimersByTimeAsync(249);
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
    const backoff = new SqsReceiveBackoff();
    for (let i = 0; i < 10; i++) backoff.failed();
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
