import { SqsConsumerManager } from '../lib';
import { startFulfilmentService } from './fixtures/fulfilment.fixture';
import { startShippingApp } from './fixtures/shipping.fixture';
import { announcedDelayMs } from './support/receive-delay';
import { waitFor } from './support/wait-for';
import { usePollingHarness } from './support/polling-harness';

/**
 * A queue URL that names no queue (a typo, another region or account): the app says so once, with
 * the URL, and each later failed receive says when the next one really comes (sqs-consumer's own
 * pause after such an error plus the module's backoff, not the backoff alone). `failFastOnStartup`
 * refuses to start instead.
 */
describe('a queue that does not exist', () => {
  const polling = usePollingHarness();
  const missingUrl = () => `${process.env.SQS_ENDPOINT}/000000000000/no-such-queue-${process.pid}`;

  it('is reported once with its URL, and every failed receive gives the real delay before the next', async () => {
    const url = missingUrl();
    // sqs-consumer pauses authenticationErrorTimeout after "the queue does not exist": 3 s here.
    await polling.start(
      startShippingApp({ queues: [{ name: 'orders', url }], authenticationErrorTimeout: 3_000 }),
    );
    const at: number[] = [];
    const failures = () => polling.logged.filter((line) => line.includes('no-such-queue'));
    await waitFor(
      () => {
        if (failures().length > at.length) at.push(Date.now());
        return failures().length >= 2;
      },
      30_000,
      'two failed receives',
    );

    const [first, second] = failures();
    expect(first).toMatch(
      new RegExp(
        `^Queue "orders" does not exist: ${url.replace(/[.]/g, '\\.')} \\(.*queue does not exist\\)\\. Check the URL`,
      ),
    );
    expect(first).toContain('set failFastOnStartup: true to refuse to start instead');
    expect(second).toMatch(
      new RegExp(`^Queue "orders" \\(${url.replace(/[.]/g, '\\.')}\\): receive failed \\(`),
    );
    expect(second).toMatch(/\(2 in a row\)\.$/);
    expect(polling.logged.filter((line) => line.includes('does not exist:'))).toHaveLength(1);
    // The delay the first line announced is the one that passed before the second receive failed.
    const announced = announcedDelayMs(first);
    expect(announced).toBeGreaterThanOrEqual(3_000);
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(announced - 50);
    expect(at[1] - at[0]).toBeLessThan(announced + 1_500);
  });

  it('with failFastOnStartup, stops the start-up naming the queue and its URL', async () => {
    const url = missingUrl();
    const failure = await polling
      .start(startShippingApp({ queues: [{ name: 'orders', url }], failFastOnStartup: true }))
      .then(
        () => undefined,
        (error: Error) => error,
      );
    expect(failure?.message).toContain('SqsModule cannot start (failFastOnStartup):');
    expect(failure?.message).toContain(`queue "orders" does not exist: ${url} (`);
    expect(failure?.message).toContain('or drop failFastOnStartup to start anyway');
  });

  it('with failFastOnStartup, keeps SqsServer (the microservice transport) from listening too', async () => {
    const url = missingUrl();
    await expect(
      startFulfilmentService({ queues: [{ name: 'orders', url }], failFastOnStartup: true }),
    ).rejects.toThrow(
      `SqsServer cannot start (failFastOnStartup):\n- queue "orders" does not exist: ${url} (`,
    );
  });

  it('with failFastOnStartup, starts when the queue is there', async () => {
    const queue = await polling.queues.create('present');
    const app = await polling.start(
      startShippingApp({ queues: [{ name: 'orders', url: queue.url }], failFastOnStartup: true }),
    );
    expect(app.get(SqsConsumerManager).isRunning('orders')).toBe(true);
    expect(polling.logged.filter((line) => line.includes('does not exist'))).toEqual([]);
  });
});
