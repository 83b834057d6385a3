import { Injectable } from '@nestjs/common';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { IsInt } from 'class-validator';
import { SqsContext, SqsEvent, SqsMessageHandler } from '../lib';
import { buildSqsRecord } from '../lib/testing';
import { toSqsRecord } from '../lib/sqs/consumer/sqs-message.mapper';
import { TestQueues } from './support/sqs-queues';
import { createTestApp } from './support/test-app';

/**
 * Test records are what SQS delivers: message attributes of every type, with the digest SQS
 * computes over them (checked against fauxqs, which computes its own), and FIFO batches refused
 * where they would silently run unordered.
 */

describe('test records', () => {
  let queues: TestQueues;
  beforeAll(() => {
    queues = new TestQueues();
  });
  afterAll(() => queues.deleteAll());

  it('carry the message attributes and md5OfMessageAttributes SQS delivers', async () => {
    const queue = await queues.create('records-md5');
    const signature = Buffer.from([0, 1, 2, 250, 255]);
    await queues.client.send(
      new SendMessageCommand({
        QueueUrl: queue.url,
        MessageBody: 'Test message.',
        MessageAttributes: {
          tenant: { DataType: 'String', StringValue: 'acme' },
          priority: { DataType: 'Number', StringValue: '2' },
          signature: { DataType: 'Binary', BinaryValue: signature },
          'é-unicode': { DataType: 'String.custom', StringValue: 'ünï' },
        },
      }),
    );
    const { Messages = [] } = await queues.client.send(
      new ReceiveMessageCommand({ QueueUrl: queue.url, MessageAttributeNames: ['All'], WaitTimeSeconds: 1 }),
    );
    expect(Messages).toHaveLength(1);
    const delivered = Messages[0];

    const built = buildSqsRecord('Test message.', {
      messageAttributes: {
        tenant: 'acme',
        priority: 2,
        signature,
        'é-unicode': { dataType: 'String.custom', stringValue: 'ünï' },
      },
    });
    expect(delivered.MD5OfMessageAttributes).toMatch(/^[0-9a-f]{32}$/);
    expect(built.md5OfMessageAttributes).toBe(delivered.MD5OfMessageAttributes);
    expect(built.md5OfBody).toBe(delivered.MD5OfBody);
    // The binary attribute arrives as Lambda delivers it: base64 in binaryValue.
    expect(built.messageAttributes.signature).toMatchObject({
      dataType: 'Binary',
      binaryValue: signature.toString('base64'),
    });
    expect(toSqsRecord(delivered).messageAttributes?.signature.binaryValue).toBe(
      signature.toString('base64'),
    );
  });

  it('carry no md5OfMessageAttributes without attributes, as SQS sends none', () => {
    expect(buildSqsRecord({ id: 'e-1' })).not.toHaveProperty('md5OfMessageAttributes');
  });
});

describe('FIFO test batches', () => {
  @SqsEvent('tick')
  class Tick {
    @IsInt() n!: number;
  }
  @Injectable()
  class Ticks {
    readonly seen: number[] = [];
    readonly queues: string[] = [];
    @SqsMessageHandler(Tick)
    async onTick(tick: Tick, ctx: SqsContext): Promise<void> {
      this.seen.push(tick.n);
      this.queues.push(ctx.queue);
    }
  }

  it('are refused on a queue that is not FIFO, where they would run unordered', async () => {
    const app = await createTestApp({ providers: [Ticks], client: { defaultQueue: 'orders' } });
    await expect(app.sqs.sendBatch([{ n: 1 }, { n: 2 }], { fifo: true })).rejects.toThrow(
      'a FIFO batch (fifo: true) for queue "orders", which is not FIFO',
    );
    await expect(app.sqs.sendBatch([{ n: 1 }], { groups: ['g'] })).rejects.toThrow('which is not FIFO');
    await expect(app.sqs.sendBatch([{ n: 1 }], { groups: ['g'] })).rejects.toMatchObject({
      code: 'SQS_CONFIGURATION',
    });
    expect(app.get(Ticks).seen).toEqual([]);
    await app.close();
  });

  it('run in order on a queue configured FIFO, whatever its name', async () => {
    const app = await createTestApp({
      providers: [Ticks],
      sqs: { queues: [{ name: 'orders', fifo: true }] },
      client: { defaultQueue: 'orders' },
    });
    const batch = await app.sqs.sendBatch([{ n: 1 }, { n: 2 }, { n: 3 }], { fifo: true });
    expect(batch.statuses).toEqual(['OK', 'OK', 'OK']);
    expect(batch.records.map((record) => record.attributes?.MessageGroupId)).toEqual(['g1', 'g1', 'g1']);
    expect(app.get(Ticks).seen).toEqual([1, 2, 3]);
    await app.close();
  });

  it('with groups and no queue go to the default FIFO queue, test-queue.fifo', async () => {
    const app = await createTestApp({ providers: [Ticks] });
    const batch = await app.sqs.sendBatch([{ n: 1 }, { n: 2 }], { groups: ['a', 'b'] });
    expect(batch.statuses).toEqual(['OK', 'OK']);
    expect(batch.records.map((record) => record.attributes?.MessageGroupId)).toEqual(['a', 'b']);
    expect(app.get(Ticks).queues).toEqual(['test-queue.fifo', 'test-queue.fifo']);
    await app.close();
  });
});

describe('SqsTestClient.send', () => {
  @SqsEvent('tock')
  class Tock {
    @IsInt() n!: number;
  }
  @Injectable()
  class Tocks {
    readonly queues: string[] = [];
    @SqsMessageHandler(Tock)
    async onTock(_tock: Tock, ctx: SqsContext): Promise<void> {
      this.queues.push(ctx.queue);
    }
  }

  it('sends to the default queue when the queue option is undefined', async () => {
    const app = await createTestApp({ providers: [Tocks], client: { defaultQueue: 'orders' } });
    expect((await app.sqs.send({ n: 1 }, { queue: undefined })).status).toBe('OK');
    expect((await app.sqs.send({ n: 2 }, { queue: 'refunds' })).status).toBe('OK');
    expect(app.get(Tocks).queues).toEqual(['orders', 'refunds']);
    await app.close();
  });

  it('refuses a record with a groupId for a queue that is not FIFO, as sendBatch does', async () => {
    const app = await createTestApp({ providers: [Tocks], client: { defaultQueue: 'orders' } });
    await expect(app.sqs.send({ n: 1 }, { groupId: 'g' })).rejects.toThrow(
      'SqsTestClient.send: a FIFO record (groupId "g") for queue "orders", which is not FIFO',
    );
    await expect(app.sqs.send({ n: 1 }, { queue: 'refunds', groupId: 'g' })).rejects.toThrow(
      "which is not FIFO: its records would run concurrently, unordered. Send it to a queue named '*.fifo'",
    );
    expect(app.get(Tocks).queues).toEqual([]);
    await app.close();
  });

  it('sends a record with a groupId to a FIFO queue: by name, configured, or the default test-queue.fifo', async () => {
    const app = await createTestApp({
      providers: [Tocks],
      sqs: { queues: [{ name: 'orders', fifo: true }] },
    });
    const sent = await app.sqs.send({ n: 1 }, { groupId: 'g' });
    expect(sent.status).toBe('OK');
    expect(sent.record.attributes?.MessageGroupId).toBe('g');
    expect((await app.sqs.send({ n: 2 }, { queue: 'orders', groupId: 'g' })).status).toBe('OK');
    expect((await app.sqs.send({ n: 3 }, { queue: 'refunds.fifo', groupId: 'g' })).status).toBe('OK');
    expect(app.get(Tocks).queues).toEqual(['test-queue.fifo', 'orders', 'refunds.fifo']);
    await app.close();
  });
});
