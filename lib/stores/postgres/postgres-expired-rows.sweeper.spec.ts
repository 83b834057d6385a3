import { Logger } from '@nestjs/common';
import { PostgresExpiredRowsSweeper } from './postgres-expired-rows.sweeper';

/** The sweeper's schedule and its reporting, on a fake clock and a scripted batch (the SQL is proven on Postgres in test/). */
describe('PostgresExpiredRowsSweeper', () => {
  let logger: { warn: jest.Mock; log: jest.Mock };
  beforeEach(() => {
    jest.useFakeTimers();
    logger = { warn: jest.fn(), log: jest.fn() };
  });
  afterEach(() => jest.useRealTimers());

  const sweeperOf = (answers: Array<number | Error>, options = { intervalMs: 1_000, batchSize: 10 }) => {
    const batches: number[] = [];
    const sweeper = new PostgresExpiredRowsSweeper(
      async (batchSize) => {
        batches.push(batchSize);
        const answer = answers.shift() ?? 0;
        if (answer instanceof Error) throw answer;
        return answer;
      },
      options,
      logger as unknown as Logger,
    );
    return { sweeper, batches };
  };

  it('runs batches back to back while they come back full, then waits for the next interval', async () => {
    const { sweeper, batches } = sweeperOf([10, 10, 3, 10, 0]);
    sweeper.start();
    sweeper.start(); // a second start schedules nothing more
    await jest.advanceTimersByTimeAsync(1_500); // the first pass comes within 0.5 to 1 interval
    expect(batches).toEqual([10, 10, 10]);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(batches).toHaveLength(5); // 10 (full), then 0
    expect(logger.log).not.toHaveBeenCalled(); // nothing to say of a sweep that works
    await sweeper.stop();
  });

  it('reports a failing sweep once, from its first failure, and its recovery once', async () => {
    const { sweeper, batches } = sweeperOf([
      new Error('connection refused'),
      new Error('connection refused'),
      2,
      1,
      new Error('timeout'),
    ]);
    sweeper.start();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(batches).toHaveLength(1);
    expect(logger.warn.mock.calls).toEqual([
      [
        'Sweeping expired rows failed (connection refused); retrying every 1000 ms. Claims ignore expired rows meanwhile.',
      ],
    ]);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(batches).toHaveLength(2);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(logger.log.mock.calls).toEqual([['Sweeping expired rows works again (2 deleted).']]);
    // Working again: the next success says nothing, the next failure is reported anew.
    await jest.advanceTimersByTimeAsync(1_000);
    expect(logger.log).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(batches).toHaveLength(5);
    expect(logger.warn).toHaveBeenCalledTimes(2);
    await sweeper.stop();
  });

  it('sweeps nothing in the background with sweeper: false', async () => {
    const batches: number[] = [];
    const sweeper = new PostgresExpiredRowsSweeper(
      async (batchSize) => {
        batches.push(batchSize);
        return 0;
      },
      false,
      logger as unknown as Logger,
    );
    sweeper.start();
    await jest.advanceTimersByTimeAsync(24 * 3_600_000);
    expect(batches).toEqual([]);
    expect(await sweeper.runOnce()).toBe(0); // on demand, still
    expect(batches).toHaveLength(1);
  });

  it('stops: no pass after stop, and stop waits for the batch that is running', async () => {
    let finish!: (deleted: number) => void;
    const batches: number[] = [];
    const sweeper = new PostgresExpiredRowsSweeper(
      (batchSize) => {
        batches.push(batchSize);
        return new Promise<number>((resolve) => (finish = resolve));
      },
      { intervalMs: 1_000, batchSize: 10 },
      logger as unknown as Logger,
    );
    sweeper.start();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(batches).toHaveLength(1);
    let stopped = false;
    const stopping = sweeper.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    finish(10); // a full batch: without stop, the pass would go on
    await stopping;
    await jest.advanceTimersByTimeAsync(5_000);
    expect(batches).toHaveLength(1);
  });

  it.each([
    [{ intervalMs: 0 }, /intervalMs must be a positive number/],
    [{ intervalMs: Infinity }, /intervalMs must be a positive number/],
    [{ batchSize: 0 }, /batchSize must be a positive integer/],
    [{ batchSize: 2.5 }, /batchSize must be a positive integer/],
  ])('refuses %p', (options, message) => {
    expect(() => new PostgresExpiredRowsSweeper(async () => 0, options, logger as unknown as Logger)).toThrow(
      message,
    );
  });
});
