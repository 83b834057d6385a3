import { spawn, ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { CreateQueueCommand, Message } from '@aws-sdk/client-sqs';
import { Injectable } from '@nestjs/common';
import { InvalidSqsMessageError, SqsConsumerEventHandler } from '../lib';
import { orderCreated, ShippingLog, startShippingApp } from './fixtures/shipping.fixture';
import { fauxqsClientConfig, TestQueues, waitFor } from './support/sqs-queues';
import { killOnExit } from './support/kill-on-exit';
import { announcedDelayMs } from './support/receive-delay';
import { usePollingHarness } from './support/polling-harness';

@Injectable()
class OrdersEvents {
  readonly failures: Array<{ error: Error; messageId: string | undefined }> = [];
  readonly processed: Array<string | undefined> = [];

  @SqsConsumerEventHandler('orders', 'processing_error')
  onFailure(error: Error, message: Message): void {
    this.failures.push({ error, messageId: message.MessageId });
  }

  @SqsConsumerEventHandler('orders', 'message_processed')
  async onProcessed(message: Message): Promise<void> {
    this.processed.push(message.MessageId);
    throw new Error('a listener that fails must not disturb the consumer');
  }
}

describe('SqsModule polling: consumer events and receive errors', () => {
  const polling = usePollingHarness();
  const { queues } = polling;

  it('calls @SqsConsumerEventHandler() methods: processing_error per failed record, message_processed per ack', async () => {
    const queue = await queues.create('events');
    const app = await polling.start(
      startShippingApp({ queues: [{ name: 'orders', url: queue.url }], providers: [OrdersEvents] }),
    );
    const events = app.get(OrdersEvents);
    app.get(ShippingLog).failures.set('order-2', Infinity);
    const [ok, failing, invalid] = await queues.sendBatch(queue.url, [
      orderCreated('1'),
      orderCreated('2'),
      { type: 'nope' },
    ]);

    await waitFor(() => events.failures.length >= 2 && events.processed.length === 1, 'the events');
    expect(events.processed).toEqual([ok]);
    const byId = new Map(events.failures.map((failure) => [failure.messageId, failure.error]));
    expect(byId.get(failing)?.message).toContain('the warehouse rejected order-2');
    expect(byId.get(invalid)).toBeInstanceOf(InvalidSqsMessageError);
    // The failing listener was logged, and the consumer went on.
    expect(
      polling.logged.some((line) =>
        line.includes('OrdersEvents.onProcessed (an @SqsConsumerEventHandler()) failed'),
      ),
    ).toBe(true);
    await queues.send(queue.url, orderCreated('3'));
    await waitFor(() => app.get(ShippingLog).shipments('order-3') === 1, 'the next message');
  });

  describe('when SQS cannot be reached', () => {
    let server: ChildProcess | undefined;
    afterEach(() => {
      server?.kill();
      server = undefined;
    });

    it('logs receive errors, retries with a growing pause, and resumes once SQS is back', async () => {
      const port = await freePort();
      const endpoint = `http://127.0.0.1:${port}`;
      const url = `http://sqs.us-east-1.localhost:${port}/000000000000/comeback`;
      const app = await polling.start(
        startShippingApp({
          queues: [{ name: 'orders', url }],
          client: { ...fauxqsClientConfig(), endpoint, maxAttempts: 1 },
        }),
      );
      const failures = () => polling.logged.filter((line) => line.includes('receive failed'));
      await waitFor(() => failures().length >= 3, 'three failed receives', 30_000);
      const pauses = failures().map(announcedDelayMs);
      expect(pauses[1]).toBeGreaterThan(pauses[0]);
      expect(pauses[2]).toBeGreaterThan(pauses[1]);
      expect(failures()[2]).toContain('(3 in a row)');

      server = spawn(process.execPath, [join(__dirname, '..', 'node_modules', 'fauxqs', 'dist', 'cli.js')], {
        env: { ...process.env, FAUXQS_PORT: String(port) },
        stdio: 'ignore',
      });
      killOnExit(server);
      const revived = new TestQueues({ ...fauxqsClientConfig(), endpoint });
      try {
        const created = () => revived.client.send(new CreateQueueCommand({ QueueName: 'comeback' }));
        await waitFor(
          () =>
            created().then(
              () => true,
              () => false,
            ),
          'fauxqs to start',
          30_000,
          100,
        );
        await revived.send(url, orderCreated('1'));
        await waitFor(() => app.get(ShippingLog).shipped.length === 1, 'the consumer to resume', 30_000);
        expect(polling.logged.some((line) => /receiving again after \d+ failed receive/.test(line))).toBe(
          true,
        );
      } finally {
        revived.client.destroy();
      }
    });
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
