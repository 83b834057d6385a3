import { expect } from '@jest/globals';
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Consumer } from 'sqs-consumer';

/**
 * POLLING HOOK (issue 3). Today this proves the matrix cell itself: the sqs-consumer major the cell
 * pins (14 on Node 20, 15 on Node 22) is installed beside the tarball, runs on this Node, and
 * receives a real message from fauxqs (started by global-setup.mjs, SQS_ENDPOINT).
 *
 * When SqsModule gains the polling host, replace the bare Consumer below with the app itself:
 * `Test.createTestingModule({ imports: [AppModule] })` with the queue URL of `url` below and
 * `autoStart` on, `createNestApplication()`/`init()`, send an order twice, wait until
 * `OrdersHandler.shipped` has one entry, `close()`, and assert that the pollers stopped.
 */
export async function checkPolling(): Promise<void> {
  const expectedMajor = process.env.COMPAT_SQS_CONSUMER;
  const installed = JSON.parse(
    readFileSync(join(process.cwd(), 'node_modules', 'sqs-consumer', 'package.json'), 'utf8'),
  ) as { version: string };
  expect(`${installed.version.split('.')[0]}`).toBe(expectedMajor);
  expect(process.versions.node.split('.')[0]).toBe(process.env.COMPAT_NODE);

  const endpoint = process.env.SQS_ENDPOINT;
  if (!endpoint) throw new Error('SQS_ENDPOINT is not set: global-setup.mjs did not start fauxqs');
  const sqs = new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'compat', secretAccessKey: 'compat' },
  });
  const { QueueUrl: url } = await sqs.send(new CreateQueueCommand({ QueueName: `compat-${Date.now()}` }));
  await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: '{"type":"order_placed"}' }));

  let received: (body: string | undefined) => void = () => undefined;
  const receivedBody = new Promise<string | undefined>((resolve) => (received = resolve));
  const consumer = Consumer.create({
    queueUrl: url!,
    sqs,
    waitTimeSeconds: 1,
    handleMessage: async (message) => {
      received(message.Body);
      return message; // sqs-consumer >= 14 deletes only what the handler returns
    },
  });
  const errors: Error[] = [];
  consumer.on('error', (error) => errors.push(error));
  const stopped = new Promise<void>((resolve) => consumer.on('stopped', () => resolve()));
  consumer.start();
  try {
    expect(await receivedBody).toBe('{"type":"order_placed"}');
  } finally {
    consumer.stop({ abort: true });
    await stopped;
    sqs.destroy();
  }
  expect(errors).toEqual([]);
}
