import { Injectable } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { plainToInstance } from 'class-transformer';
import { IsInt, IsString, Min } from 'class-validator';
import {
  Idempotent,
  SqsContext,
  SqsEvent,
  SqsMessageHandler,
  SqsModuleOptions,
  SqsProducer,
  SqsProducerError,
  SqsSendError,
} from '../lib';
import { TestTopics } from './support/sns-topics';
import { fauxqsClientConfig, TestQueue, waitFor } from './support/sqs-queues';
import { usePollingHarness } from './support/polling-harness';

/**
 * SqsProducer on fauxqs, with the app's own consumer on the other side: what it sends, the
 * handlers receive as the same class, validated, routed and keyed alike; batches of 10, failed
 * entries retried alone, the rest reported; FIFO group and deduplication ids; SNS topics with and
 * without raw delivery.
 */

@SqsEvent('order_created')
class OrderCreated {
  @IsString() id!: string;
  @IsString() orderId!: string;
  @IsInt() @Min(1) amount!: number;
}

@SqsEvent('order_cancelled')
class OrderCancelled {
  @IsString() id!: string;
  @IsString() orderId!: string;
}

@SqsEvent('note', { decoder: 'text' })
class Note {
  @IsString() body!: string;
}

const created = (id: string, amount = 5) =>
  plainToInstance(OrderCreated, { id, orderId: `order-${id}`, amount });
const cancelled = (id: string) => plainToInstance(OrderCancelled, { id, orderId: `order-${id}` });

interface Seen {
  event: object;
  queue: string;
  messageId: string;
  envelopes: string[];
  tenant?: string;
}

@Injectable()
class Received {
  readonly seen: Seen[] = [];
  record(event: object, ctx: SqsContext): void {
    this.seen.push({
      event,
      queue: ctx.queue,
      messageId: ctx.messageId,
      envelopes: ctx.envelopes.map((envelope) => envelope.kind),
      tenant: ctx.messageAttribute('tenant'),
    });
  }
}

/** The SDK client with an observer of what it sends (no behaviour changed). */
function observedClient(): { client: SQSClient; batches: number[] } {
  const client = new SQSClient(fauxqsClientConfig());
  const batches: number[] = [];
  client.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as { Entries?: unknown[] };
      if (Array.isArray(input.Entries) && 'MessageBody' in ((input.Entries[0] as object) ?? {}))
        batches.push(input.Entries.length);
      return next(args);
    },
    { step: 'initialize', name: 'observeSendMessageBatch' },
  );
  return { client, batches };
}

describe('SqsProducer on fauxqs', () => {
  const polling = usePollingHarness();
  const { queues } = polling;
  const topics = new TestTopics();
  afterAll(() => topics.deleteAll());

  /** A polling app with these handlers; the producer retries after 5 ms rather than its default. */
  function start(sqs: SqsModuleOptions, handlers: Function[]): Promise<TestingModule> {
    return polling.startApp({
      ...sqs,
      producer: { retryDelayMs: 5, ...sqs.producer },
      providers: [Received, ...(handlers as never[])],
    });
  }

  it('sends event instances in batches of 10 that the consumer receives as the same classes, each once', async () => {
    @Injectable()
    class Orders {
      constructor(private readonly received: Received) {}
      @SqsMessageHandler(OrderCreated, { queue: 'orders' })
      @Idempotent()
      async onCreated(event: OrderCreated, ctx: SqsContext): Promise<void> {
        this.received.record(event, ctx);
      }
      @SqsMessageHandler(OrderCancelled, { queue: 'orders' })
      async onCancelled(event: OrderCancelled, ctx: SqsContext): Promise<void> {
        this.received.record(event, ctx);
      }
    }
    const queue = await queues.create('producer');
    const { client, batches } = observedClient();
    const app = await start({ client, queues: [{ name: 'orders', url: queue.url }] }, [Orders]);
    const events = Array.from({ length: 25 }, (_, i) =>
      i % 5 === 4 ? cancelled(`e${i}`) : created(`e${i}`),
    );
    const sent = await app.get(SqsProducer).sendBatch('orders', events);
    expect(sent.map((message) => message.index)).toEqual(events.map((_, i) => i));
    expect(batches).toEqual([10, 10, 5]);

    const received = app.get(Received);
    await waitFor(() => received.seen.length === 25, 'every event to be handled');
    for (const [i, event] of events.entries()) {
      const seen = received.seen.find((entry) => entry.messageId === sent[i].messageId)!;
      expect(seen.event).toBeInstanceOf(event.constructor);
      // The same event, with the type the producer wrote for the consumer to route it by.
      expect(seen.event).toEqual(
        Object.assign(Object.create(event.constructor.prototype), event, { type: expect.any(String) }),
      );
    }
    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'every message to be acked');
    client.destroy();
  });

  it('sends to a queue the app does not consume (consume: false), which is never polled', async () => {
    const queue = await queues.create('producer-send-only');
    const app = await start({ queues: [{ name: 'outbox', url: queue.url, consume: false }] }, []);
    expect(polling.logged.filter((line) => line.includes('has no handler'))).toEqual([]);
    await app.get(SqsProducer).send('outbox', created('e1'));
    // Still there: no consumer took it (and failed it for want of a handler).
    const [message] = await waitFor(async () => {
      const visible = await queues.peek(queue.url);
      return visible.length === 1 ? visible : undefined;
    }, 'the message to wait in the queue');
    expect(JSON.parse(message.Body!)).toEqual({
      type: 'order_created',
      id: 'e1',
      orderId: 'order-e1',
      amount: 5,
    });
  });

  it('warns at bootstrap about a polled queue without a handler', async () => {
    const queue = await queues.create('producer-no-handler');
    await start({ queues: [{ name: 'outbox', url: queue.url }] }, []);
    expect(polling.logged.filter((line) => line.includes('Queue "outbox" has no handler'))).toHaveLength(1);
  });

  it('refuses unusable producer options at start-up, and per-call values before sending', async () => {
    const queue = await queues.create('producer-options');
    for (const [producer, message] of [
      [{ maxAttempts: 0 }, 'SqsModule producer options: maxAttempts must be a whole number from 1, got 0.'],
      [
        { retryDelayMs: -1 },
        'SqsModule producer options: retryDelayMs must be a number of milliseconds, got -1.',
      ],
    ] as const) {
      const error = await start({ queues: [{ name: 'orders', url: queue.url }], producer }, []).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SqsProducerError);
      expect((error as Error).message).toBe(message);
    }
    const app = await start({ queues: [{ name: 'orders', url: queue.url, consume: false }] }, []);
    await expect(app.get(SqsProducer).send('orders', created('e1'), { delaySeconds: 901 })).rejects.toThrow(
      'SqsProducer (queue "orders"): delaySeconds must be whole seconds from 0 to 900.',
    );
    expect(await app.get(SqsProducer).sendBatch('nowhere', [])).toEqual([]);
  });

  it('validates before sending: nothing leaves when one event would be refused', async () => {
    const queue = await queues.create('producer-invalid');
    const app = await start({ queues: [{ name: 'orders', url: queue.url }] }, []);
    const producer = app.get(SqsProducer);
    const error = await producer
      .sendBatch('orders', [created('ok'), created('zero', 0)])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SqsProducerError);
    expect((error as Error).message).toContain('nothing was sent, 1 event(s) fail validation');
    expect((error as Error).message).toContain('#1 OrderCreated: amount must not be less than 1');
    await expect(producer.send('orders', { id: 'x' })).rejects.toThrow('send an instance of an event class');
    expect(await queues.depth(queue.url)).toBe(0);
  });

  it('retries only the entries SQS failed on its side, and reports those it refused', async () => {
    @Injectable()
    class Notes {
      constructor(private readonly received: Received) {}
      @SqsMessageHandler(Note, { queue: 'notes' })
      async onNote(event: Note, ctx: SqsContext): Promise<void> {
        this.received.record(event, ctx);
      }
    }
    const queue = await queues.create('producer-retry');
    // SQS itself: its answer to the first call fails entries 1 and 2 as internal errors (what a
    // throttled or degraded SQS answers; fauxqs never does), the rest go to fauxqs as they are.
    const real = new SQSClient(fauxqsClientConfig());
    const calls: string[][] = [];
    const flaky = {
      async send(command: unknown) {
        if (!(command instanceof SendMessageBatchCommand)) return real.send(command as never);
        const entries = command.input.Entries ?? [];
        calls.push(entries.map((entry) => entry.Id!));
        const shed = calls.length === 1 ? new Set(['1', '2']) : new Set<string>();
        const answer = await real.send(
          new SendMessageBatchCommand({
            ...command.input,
            Entries: entries.filter((entry) => !shed.has(entry.Id!)),
          }),
        );
        const failed = [...shed].map((Id) => ({
          Id,
          Code: 'InternalError',
          Message: 'internal error',
          SenderFault: false,
        }));
        return { ...answer, Failed: [...(answer.Failed ?? []), ...failed] };
      },
      destroy: () => real.destroy(),
    };
    const app = await start({ queues: [{ name: 'notes', url: queue.url, decoder: 'text', client: flaky }] }, [
      Notes,
    ]);
    const notes = ['a', 'b', 'c', 'd\u0001', 'e'].map((body) => Object.assign(new Note(), { body }));
    const error = (await app
      .get(SqsProducer)
      .sendBatch('notes', notes)
      .catch((e: unknown) => e)) as SqsSendError<Note>;
    expect(error).toBeInstanceOf(SqsSendError);
    // Only the failed entries went again; the one SQS refused for its content was not retried.
    expect(calls).toEqual([
      ['0', '1', '2', '3', '4'],
      ['1', '2'],
    ]);
    expect(error.failed).toEqual([
      expect.objectContaining({ index: 3, code: 'InvalidMessageContents', senderFault: true, attempts: 1 }),
    ]);
    expect(error.sent.map((message) => message.index)).toEqual([0, 1, 2, 4]);
    expect(error.message).toContain('1 of 5 message(s) could not be sent');
    const received = app.get(Received);
    await waitFor(() => received.seen.length === 4, 'the four notes sent');
    expect(received.seen.map((seen) => (seen.event as Note).body).sort()).toEqual(['a', 'b', 'c', 'e']);
    expect(received.seen.every((seen) => seen.event instanceof Note)).toBe(true);
    real.destroy();
  });

  it('FIFO: the group id from the event, the deduplication id from the idempotency key', async () => {
    @Injectable()
    class Ledger {
      constructor(private readonly received: Received) {}
      @SqsMessageHandler(OrderCreated, { queue: 'ledger.fifo' })
      @Idempotent({ keyPath: 'orderId' })
      async onCreated(event: OrderCreated, ctx: SqsContext): Promise<void> {
        this.received.record(event, ctx);
      }
    }
    const queue = await queues.create('producer', { fifo: true });
    const app = await start({ queues: [{ name: 'ledger.fifo', url: queue.url }] }, [Ledger]);
    const producer = app.get(SqsProducer);
    const byOrder = { groupId: (event: OrderCreated) => event.orderId };
    await producer.sendBatch('ledger.fifo', [created('e1'), created('e2'), created('e3')], byOrder);
    // A retried send (a new id, the same order): SQS drops it, its deduplication id being the key.
    const retry = plainToInstance(OrderCreated, { id: 'e1-retry', orderId: 'order-e1', amount: 5 });
    await producer.send('ledger.fifo', retry, byOrder);
    const received = app.get(Received);
    await waitFor(() => received.seen.length === 3, 'three orders');
    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'the queue to be empty');
    expect(received.seen.map((seen) => (seen.event as OrderCreated).id).sort()).toEqual(['e1', 'e2', 'e3']);
    // SQS dropped the retry itself: it never reached the consumer as a duplicate.
    expect(
      polling.logged.filter((line) => line.startsWith('status=')).map((line) => line.split(' ')[0]),
    ).toEqual(['status=OK', 'status=OK', 'status=OK']);
    await expect(producer.send('ledger.fifo', created('e4'))).rejects.toThrow(
      'FIFO needs a group id for each message',
    );
  });

  it('writes the type where the queue reads it: a message attribute, next to the attributes given', async () => {
    @Injectable()
    class Tenanted {
      constructor(private readonly received: Received) {}
      @SqsMessageHandler(OrderCreated, { queue: 'tenants' })
      async onCreated(event: OrderCreated, ctx: SqsContext): Promise<void> {
        this.received.record(event, ctx);
      }
      @SqsMessageHandler(Note, { queue: 'tenants' })
      async onNote(event: Note, ctx: SqsContext): Promise<void> {
        this.received.record(event, ctx);
      }
    }
    const queue = await queues.create('producer-attributes');
    const app = await start(
      { queues: [{ name: 'tenants', url: queue.url, discriminator: { attribute: 'eventType' } }] },
      [Tenanted],
    );
    const producer = app.get(SqsProducer);
    await producer.send('tenants', created('e1'), { messageAttributes: { tenant: 'acme' }, delaySeconds: 0 });
    await producer.send(queue.url, Object.assign(new Note(), { body: 'plain text, no JSON' }));
    const received = app.get(Received);
    await waitFor(() => received.seen.length === 2, 'both messages');
    const order = received.seen.find((seen) => seen.event instanceof OrderCreated)!;
    expect(order.tenant).toBe('acme');
    expect(received.seen.find((seen) => seen.event instanceof Note)!.event).toEqual(
      Object.assign(new Note(), { body: 'plain text, no JSON' }),
    );
  });

  it('publishes to an SNS topic; queues subscribed with and without raw delivery both receive the same class', async () => {
    @Injectable()
    class Subscribers {
      constructor(private readonly received: Received) {}
      @SqsMessageHandler(OrderCreated, { queue: 'raw' })
      @Idempotent()
      async onRaw(event: OrderCreated, ctx: SqsContext): Promise<void> {
        this.received.record(event, ctx);
      }
      @SqsMessageHandler(OrderCreated, { queue: 'enveloped' })
      @Idempotent({ scope: 'order_created.enveloped' })
      async onEnveloped(event: OrderCreated, ctx: SqsContext): Promise<void> {
        this.received.record(event, ctx);
      }
    }
    const raw: TestQueue = await queues.create('sns-raw');
    const enveloped: TestQueue = await queues.create('sns-enveloped');
    const topic = await topics.create('orders');
    await topics.subscribe(topic, raw.url, { raw: true });
    await topics.subscribe(topic, enveloped.url, { raw: false });
    const app = await start(
      {
        discriminator: { attribute: 'eventType' },
        queues: [
          { name: 'raw', url: raw.url },
          { name: 'enveloped', url: enveloped.url, envelope: 'sns' },
        ],
        producer: { snsClient: fauxqsClientConfig() },
      },
      [Subscribers],
    );
    const producer = app.get(SqsProducer);
    await producer.publishBatch(topic, [created('e1'), created('e2')], {
      messageAttributes: { tenant: 'acme' },
    });
    // A publisher's retry of the same event: a new SNS message, caught by the key on both queues.
    await producer.publish(topic, created('e1'), { messageAttributes: { tenant: 'acme' } });
    const received = app.get(Received);
    await waitFor(() => received.seen.length === 4, 'two orders on each queue');
    await waitFor(
      async () => (await queues.depth(raw.url)) + (await queues.depth(enveloped.url)) === 0,
      'both queues to be drained',
    );
    const byQueue = (queue: string) => received.seen.filter((seen) => seen.queue === queue);
    for (const queue of ['raw', 'enveloped']) {
      expect(
        byQueue(queue)
          .map((seen) => (seen.event as OrderCreated).id)
          .sort(),
      ).toEqual(['e1', 'e2']);
      expect(
        byQueue(queue).every((seen) => seen.event instanceof OrderCreated && seen.tenant === 'acme'),
      ).toBe(true);
    }
    expect(byQueue('raw')[0].envelopes).toEqual([]);
    expect(byQueue('enveloped')[0].envelopes).toEqual(['sns']);
  });
});
