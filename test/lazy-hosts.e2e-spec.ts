import { join } from 'node:path';
import { stepsOfLoadingFixture } from './support/fork-ts';
import { TestQueues } from './support/sqs-queues';

/**
 * The producer and the polling host load only where an app uses them (issue 50): a process that runs a
 * Lambda handler and an app that neither polls nor sends loads of lib/sqs/producer/ and
 * lib/sqs/consumer/ only the small classes the root entry names, and nothing of lib/sqs/sdk/; the
 * polling host loads when an app polls, the producer's engine on the first send, and both work then
 * (test/fixtures/lazy-hosts.main.ts).
 */

/** What the root entry loads of the two folders: the injectable classes, the decorator, the bindings check. */
const ROOT_FILES = [
  'consumer/sqs-consumer-event.decorator.ts',
  'consumer/sqs-consumer.manager.ts',
  'consumer/sqs-queue-bindings.ts',
  'producer/sqs-producer.errors.ts',
  'producer/sqs-producer.ts',
];

describe('the producer and the polling host load where used', () => {
  const queues = new TestQueues();
  afterAll(() => queues.deleteAll());

  it('a Lambda handler and an app that neither polls nor sends load neither; polling and sending load them', async () => {
    const queue = await queues.create('lazy-hosts');
    const { code, output, steps } = await stepsOfLoadingFixture(
      join(__dirname, 'fixtures', 'lazy-hosts.main.ts'),
      { QUEUE_URL: queue.url },
    );
    expect({ code, output }).toEqual({ code: 0, output: expect.any(String) });

    expect(steps.lambda).toEqual(ROOT_FILES);
    // The quiet app's queue has an empty url: what says why it is not polled loads, not the polling host.
    expect(steps.quiet).toEqual([...ROOT_FILES, 'consumer/sqs-unpolled-queues.ts'].sort());
    // Polling loads the polling host and the SDK client, not the producer's engine.
    const polling = steps.polling.filter((file) => !ROOT_FILES.includes(file));
    expect(polling).toEqual(
      expect.arrayContaining([
        'consumer/sqs-consumer-set.ts',
        'consumer/sqs-queue.consumer.ts',
        'sdk/sqs-client.factory.ts',
      ]),
    );
    expect(polling.filter((file) => file.startsWith('producer/'))).toEqual([]);
    // The first send loads the engine: the encoder and the batch sender.
    expect(steps.sent.filter((file) => !steps.polling.includes(file))).toEqual([
      'producer/sqs-batch.sender.ts',
      'producer/sqs-event.encoder.ts',
      'producer/sqs-producer.engine.ts',
    ]);
    expect(steps.received).toEqual(steps.sent);
  }, 120_000);
});
