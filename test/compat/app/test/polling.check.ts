import { expect } from '@jest/globals';
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { IdempotencyModule, SqsConsumerManager, SqsModule } from 'nestjs-idempotent-sqs';
import { OrdersHandler } from '../src/orders.handler.js';
import { queueDepth } from './queue-depth.js';

/**
 * A provider of the app's own module that records, when it is destroyed, whether the consumers still
 * polled: they must have stopped first. Pins the one reliance on Nest internals this needs (the module
 * `distance` that orders lifecycle hooks, `lib/common/nest-internals.ts`) on Nest 11 and Nest 12.
 */
@Injectable()
class ShutdownWitness implements OnModuleDestroy {
  pollingWhenDestroyed: boolean | undefined;
  constructor(private readonly manager: SqsConsumerManager) {}
  onModuleDestroy(): void {
    this.pollingWhenDestroyed = this.manager.isRunning('orders');
  }
}

/**
 * The polling host with the sqs-consumer major the cell pins (14 on Node 20, 15 on Node 22),
 * installed beside the tarball: the app polls a real queue on fauxqs (started by global-setup.mjs,
 * SQS_ENDPOINT), runs the handler once for an event sent twice, acks both copies, and stops its
 * pollers on close, before the app's own providers are destroyed.
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
  const clientConfig = {
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'compat', secretAccessKey: 'compat' },
  };
  const sqs = new SQSClient(clientConfig);
  const { QueueUrl: url } = await sqs.send(
    new CreateQueueCommand({
      QueueName: `compat-${Date.now()}`,
      // Two copies may arrive in one batch: the in-flight one comes back after a second, as a duplicate.
      Attributes: { VisibilityTimeout: '1' },
    }),
  );
  const body = JSON.stringify({ type: 'order_placed', id: 'poll-1', orderId: 'o-poll', amount: 2 });
  await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));
  await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body })); // a producer retry

  const moduleRef = await Test.createTestingModule({
    imports: [
      IdempotencyModule.forRoot({}),
      SqsModule.forRoot({
        queues: [{ name: 'orders', url: url! }],
        client: clientConfig,
        waitTimeSeconds: 1,
      }),
    ],
    providers: [OrdersHandler, ShutdownWitness],
  }).compile();
  const app = moduleRef;
  await app.init();
  try {
    const manager = app.get(SqsConsumerManager);
    expect(manager.isRunning('orders')).toBe(true);
    const handler = app.get(OrdersHandler);
    const deadline = Date.now() + 15_000;
    while ((handler.shipped.length === 0 || (await queueDepth(sqs, url!)) > 0) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(handler.shipped).toEqual([{ orderId: 'o-poll', key: 'poll-1', queue: 'orders' }]);
    expect(await queueDepth(sqs, url!)).toBe(0);
    await app.close();
    expect(manager.isRunning('orders')).toBe(false);
    expect(app.get(ShutdownWitness).pollingWhenDestroyed).toBe(false);
  } finally {
    await app.close();
    sqs.destroy();
  }
}
