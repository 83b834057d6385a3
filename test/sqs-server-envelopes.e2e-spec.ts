import { PublishCommand } from '@aws-sdk/client-sns';
import { buildEventBridgeEvent, buildS3TestEvent } from '../lib/testing';
import { orderPlaced, startFulfilmentService } from './fixtures/fulfilment.fixture';
import { TestTopics } from './support/sns-topics';
import { waitFor } from './support/sqs-queues';
import { usePollingHarness } from './support/polling-harness';

/**
 * SqsServer opens envelopes as the record pipeline does: an @EventPattern() handler of a queue fed by
 * an SNS topic (no raw delivery) gets the event inside, keyed by its own id.
 */
describe('SqsServer with envelopes, on fauxqs', () => {
  const polling = usePollingHarness({ captureLogs: false });
  const { queues } = polling;
  const topics = new TestTopics();

  afterAll(() => topics.deleteAll());

  it('hands @EventPattern() handlers the event inside SNS notifications and EventBridge events', async () => {
    const queue = await queues.create('ms-envelopes');
    const topic = await topics.create('ms-orders');
    await topics.subscribe(topic, queue.url, { raw: false });
    const service = await polling.start(
      startFulfilmentService({
        queues: [{ name: 'orders', url: queue.url, envelope: 'auto' }],
      }),
    );
    const publish = (event: object) =>
      topics.client.send(new PublishCommand({ TopicArn: topic, Message: JSON.stringify(event) }));
    await publish(orderPlaced('s1'));
    // A publisher's retry: a new SNS message with the same event.
    await publish(orderPlaced('s1'));
    await queues.send(
      queue.url,
      buildEventBridgeEvent(
        { id: 'eb-detail', orderId: 'order-eb' },
        { detailType: 'order_placed', id: 'eb-1' },
      ),
    );
    await queues.send(queue.url, buildS3TestEvent());
    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'the queue to drain');
    const { log, logs } = service;
    expect(log.fulfilled.map((entry) => [entry.orderId, entry.key]).sort()).toEqual([
      ['order-eb', 'eb-1'],
      ['order-s1', 's1'],
    ]);
    expect(logs.lines.filter((line) => line.message.startsWith('status=DUPLICATE'))).toHaveLength(1);
    expect(
      logs.lines.filter((line) => line.message.includes('status=SKIPPED type=s3:TestEvent')),
    ).toHaveLength(1);
  });
});
