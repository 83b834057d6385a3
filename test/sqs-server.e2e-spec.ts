import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { Consumer } from 'sqs-consumer';
import { IdempotencyStats } from '../lib/center';
import { InvalidSqsMessageError } from '../lib';
import { deferred } from './fixtures/orders.fixture';
import { FulfilmentService, orderPlaced, startFulfilmentService } from './fixtures/fulfilment.fixture';
import { waitFor } from './support/sqs-queues';
import { usePollingHarness } from './support/polling-harness';

/**
 * SqsServer, the microservice transport, on fauxqs: @EventPattern() + @Idempotent() handlers get
 * every kind of duplicate SQS produces and apply one effect per key; a message is acked only once
 * its handler has ended; what cannot be handled reaches the dead-letter queue; FIFO groups keep
 * their order.
 */
describe('SqsServer (microservice transport) on fauxqs', () => {
  const polling = usePollingHarness({ captureLogs: false });
  const { queues } = polling;

  const hiddenCount = async (url: string) => {
    const { Attributes = {} } = await queues.client.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return Number(Attributes.ApproximateNumberOfMessagesNotVisible);
  };
  const lines = (svc: FulfilmentService, status: string) =>
    svc.logs.lines.filter((line) => line.message.includes(`status=${status}`)).map((line) => line.message);

  it('applies one effect per key under redelivery after a failure, producer retries and concurrent copies', async () => {
    const queue = await queues.create('ms-dups');
    const service = await polling.start(
      startFulfilmentService({ queues: [{ name: 'orders', url: queue.url }] }),
    );
    const { log, store } = service;
    // Redelivery: the first attempt fails, SQS brings the same message back.
    log.failures.set('order-r', 1);
    // Concurrent copies: three copies in one batch; the first holds until the others met its claim.
    const claimsOf = (key: string) =>
      store.calls.filter((call) => call.method === 'tryAcquire' && call.key.endsWith(`:${key}`));
    log.holds.set(
      'order-c',
      waitFor(() => claimsOf('c').length >= 3, 'the concurrent copies to meet the claim').then(
        () => undefined,
      ),
    );
    await queues.sendBatch(queue.url, [
      orderPlaced('r'),
      orderPlaced('c'),
      orderPlaced('c'),
      orderPlaced('c'),
    ]);
    // A producer retry: the same event sent again after the first took effect, with a new message id.
    const first = await queues.send(queue.url, orderPlaced('p'));
    await waitFor(() => log.count('order-p') === 1, 'the first send to take effect');
    expect(await queues.send(queue.url, orderPlaced('p'))).not.toBe(first);

    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'the queue to drain', 30_000);
    expect(log.fulfilled.map((entry) => entry.orderId).sort()).toEqual(['order-c', 'order-p', 'order-r']);
    // The failed attempt ran, and its redelivery (receive count 2) took effect.
    expect(log.calls.filter((call) => call.orderId === 'order-r').map((call) => call.receiveCount)).toEqual([
      1, 2,
    ]);
    expect(log.fulfilled.find((entry) => entry.orderId === 'order-r')).toMatchObject({
      key: 'r',
      queue: 'orders',
      eventType: 'order_placed',
      receiveCount: 2,
    });
    // The handler ran once per key for the copies and the retries; the store saw why.
    expect(log.calls.filter((call) => call.orderId === 'order-c')).toHaveLength(1);
    expect(log.calls.filter((call) => call.orderId === 'order-p')).toHaveLength(1);
    const answers = (key: string) => claimsOf(key).map((call) => call.answer);
    expect(answers('c').slice(0, 3).sort()).toEqual(['ACQUIRED', 'IN_PROGRESS', 'IN_PROGRESS']);
    expect(answers('c').slice(3)).toEqual(['COMPLETED', 'COMPLETED']);
    expect(answers('p')).toEqual(['ACQUIRED', 'COMPLETED']);
    expect(answers('r')).toEqual(['ACQUIRED', 'ACQUIRED']);
    expect(lines(service, 'IN_PROGRESS')).toHaveLength(2);
    expect(lines(service, 'DUPLICATE')).toHaveLength(3);
    expect(lines(service, 'FAILED')[0]).toContain('the warehouse rejected order-r');
    // The Idempotency Center counts the transport's @Idempotent() handlers like the SQS hosts' ones.
    const snapshot = await service.microservice.get(IdempotencyStats).snapshot();
    expect(snapshot.eventTypes.find((type) => type.eventType === 'order_placed')).toMatchObject({
      covered: true,
      totals: { handled: 3, duplicates_completed: 3, duplicates_in_flight: 2, failed: 1 },
    });
  });

  it('acks a message only once its handler has ended: a slow handler that then fails is redelivered', async () => {
    const queue = await queues.create('ms-slow', { visibilityTimeout: 2 });
    const service = await polling.start(
      startFulfilmentService({ queues: [{ name: 'orders', url: queue.url }] }),
    );
    const { log } = service;
    const hold = deferred();
    log.holds.set('order-s', hold.promise);
    log.failures.set('order-s', 1);
    await queues.send(queue.url, orderPlaced('s'));
    await waitFor(() => log.calls.length === 1, 'the handler to be in flight');
    // A transport that acks when the handler starts would have deleted it by now.
    expect(await queues.depth(queue.url)).toBe(1);
    hold.resolve();
    await waitFor(() => log.fulfilled.length === 1, 'the redelivery to succeed', 30_000);
    expect(log.calls.map((call) => call.receiveCount)).toEqual([1, 2]);
    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'the ack');
  });

  it('close() stops polling, waits for the handler in flight, then acks it', async () => {
    const queue = await queues.create('ms-close', { visibilityTimeout: 10 });
    const service = await polling.start(
      startFulfilmentService({ queues: [{ name: 'orders', url: queue.url }] }),
    );
    const { log, server } = service;
    const consumer = server.unwrap<ReadonlyMap<string, Consumer>>().get('orders')!;
    const hold = deferred();
    log.holds.set('order-1', hold.promise);
    await queues.send(queue.url, orderPlaced('1'));
    await waitFor(() => log.calls.length === 1, 'the handler to be in flight');

    let closed = false;
    const closing = polling.close(service).then(() => (closed = true));
    await waitFor(() => !consumer.status.isRunning, 'the consumer to stop polling');
    expect(closed).toBe(false);
    expect(log.destroyed).toBe(false);
    expect(await hiddenCount(queue.url)).toBe(1);

    hold.resolve();
    await closing;
    expect(log.fulfilled.map((entry) => entry.orderId)).toEqual(['order-1']);
    expect(log.destroyed).toBe(true);
    expect(await queues.depth(queue.url)).toBe(0);
  });

  it('does not ack a handler that outlives shutdownTimeoutMs: the message stays for redelivery', async () => {
    const queue = await queues.create('ms-close-timeout', { visibilityTimeout: 10 });
    const service = await polling.start(
      startFulfilmentService({
        queues: [{ name: 'orders', url: queue.url }],
        shutdownTimeoutMs: 200,
      }),
    );
    const { log, logs } = service;
    const hold = deferred();
    log.holds.set('order-1', hold.promise);
    const id = await queues.send(queue.url, orderPlaced('1'));
    await waitFor(() => log.calls.length === 1, 'the handler to be in flight');
    await polling.close(service);
    expect(logs.lines.map((line) => line.message).join('\n')).toContain(
      `1 message(s) still in flight after 200 ms (${id})`,
    );
    hold.resolve();
    expect(log.fulfilled).toHaveLength(0);
    expect(await queues.depth(queue.url)).toBe(1);
  });

  it('fails what it cannot handle, naming the message, without claiming a key, until the DLQ takes it', async () => {
    const queue = await queues.create('ms-invalid', { maxReceiveCount: 1 });
    const service = await polling.start(
      startFulfilmentService({ queues: [{ name: 'orders', url: queue.url }] }),
    );
    const errors: Error[] = [];
    service.server.on('processing_error', (error: Error) => errors.push(error));
    // on() after listen() reaches the running consumers too.
    const notJson = await queues.send(queue.url, 'not json');
    const unknownType = await queues.send(queue.url, { type: 'order_shipped', id: 'x' });
    const keyless = await queues.send(queue.url, { type: 'order_placed', orderId: 'order-k' });
    await waitFor(async () => (await queues.depth(queue.dlqUrl!)) === 3, 'the DLQ to hold all three', 30_000);
    expect(await queues.depth(queue.url)).toBe(0);

    const invalid = lines(service, 'INVALID').join('\n');
    expect(invalid).toContain(`messageId=${notJson}`);
    expect(invalid).toContain('the body is not JSON');
    expect(invalid).toContain(`messageId=${unknownType}`);
    expect(invalid).toContain(
      `no handler for event type \\"order_shipped\\" on queue \\"orders\\" (handled: @EventPattern('order_placed'))`,
    );
    expect(lines(service, 'FAILED').join('\n')).toContain(`messageId=${keyless}`);
    const byMessage = new Map(errors.map((error) => [(error as InvalidSqsMessageError).messageId, error]));
    expect(byMessage.get(notJson)).toBeInstanceOf(InvalidSqsMessageError);
    expect(byMessage.get(notJson)!.message).toContain(`Message ${notJson} on queue "orders" is invalid`);
    // Invalid records never reach the claim; the keyless one fails at it without claiming.
    expect(service.store.calls).toHaveLength(0);
    expect(service.log.calls).toHaveLength(0);
  });

  it('keeps the order of each FIFO group across a failure and its redelivery', async () => {
    const queue = await queues.create('ms-fifo', { fifo: true });
    const service = await polling.start(
      startFulfilmentService({ queues: [{ name: 'orders.fifo', url: queue.url }] }),
    );
    const { log } = service;
    log.failures.set('order-a1', 1);
    for (const [group, id] of [
      ['a', 'a1'],
      ['b', 'b1'],
      ['a', 'a2'],
      ['b', 'b2'],
      ['a', 'a3'],
    ]) {
      await queues.send(queue.url, orderPlaced(id), { groupId: group });
    }
    await waitFor(() => log.fulfilled.length === 5, 'every order', 30_000);
    const order = (group: string) =>
      log.calls
        .filter((call) => call.groupId === group)
        .map((call) => `${call.orderId}#${call.receiveCount}`);
    expect(order('a')).toEqual(['order-a1#1', 'order-a1#2', 'order-a2#1', 'order-a3#1']);
    expect(order('b')).toEqual(['order-b1#1', 'order-b2#1']);
  });

  it('acks a message whose @Idempotent() handler throws SkipMessageException, on its first delivery', async () => {
    const queue = await queues.create('ms-skip', { visibilityTimeout: 10 });
    const service = await polling.start(
      startFulfilmentService({ queues: [{ name: 'orders', url: queue.url }] }),
    );
    service.log.skips.add('order-x');
    await queues.send(queue.url, orderPlaced('x'));
    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'the skip to ack it');
    expect(service.log.calls).toHaveLength(1);
    expect(lines(service, 'SKIPPED')[0]).toContain('order-x is obsolete');
    expect(service.store.calls.map((call) => `${call.method} ${call.answer}`)).toEqual([
      'tryAcquire ACQUIRED',
      'markComplete true',
    ]);
  });
});
