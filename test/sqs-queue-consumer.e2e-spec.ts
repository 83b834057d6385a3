import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import { Logger } from '@nestjs/common';
import { Consumer } from 'sqs-consumer';
import { SqsQueueConsumer } from '../lib/sqs/consumer/sqs-queue.consumer';
import type { SqsConsumerOptions } from '../lib/sqs/sqs-module-options.interface';
import type { SqsRecordResult, SqsRecordStatus } from '../lib/idempotency/record-outcome';
import type { SqsRecordLike } from '../lib/sqs/sqs-record.interface';
import { CapturingLogger } from './support/capturing-logger';

import { fauxqsClientConfig, TestQueues, waitFor } from './support/sqs-queues';

/**
 * The polling host's consumer of one queue, on fauxqs, with a dispatcher of the test's that answers each
 * record's status: what it logs when it starts and stops, what it does with each status (ack, leave,
 * return sooner), what it says when `terminateVisibilityTimeout`'s function fails or a delete fails, and
 * which option values it refuses. The app-level behaviour is in the sqs-consumer-* specs.
 */
describe('SqsQueueConsumer on fauxqs', () => {
  const queues = new TestQueues();
  afterAll(() => queues.deleteAll());

  let logs: CapturingLogger;
  const consumers: SqsQueueConsumer[] = [];
  beforeEach(() => {
    logs = new CapturingLogger();
    Logger.overrideLogger(logs);
  });
  afterEach(async () => {
    for (const consumer of consumers.splice(0)) await consumer.stop(5_000);
    Logger.overrideLogger(true);
  });

  /** What the dispatcher saw, and the status it answers for each body (by the body's text). */
  interface Dispatching {
    seen: SqsRecordLike[];
    statusOf: (body: string) => SqsRecordStatus;
    during?: (records: readonly SqsRecordLike[]) => Promise<void>;
  }

  type ConsumerSettings = ConstructorParameters<typeof SqsQueueConsumer>[0];
  const consumerOf = (
    url: string,
    options: SqsConsumerOptions,
    dispatching: Dispatching,
    /** The host, client or sqs-consumer class, where a test needs another. */
    settings: Partial<Pick<ConsumerSettings, 'host' | 'client' | 'Consumer'>> = {},
  ) => {
    const consumer = new SqsQueueConsumer({
      host: 'SqsModule',
      client: queues.client,
      Consumer,
      ...settings,
      queue: 'orders',
      url,
      options: { waitTimeSeconds: 1, ...options },
      listeners: [],
      dispatcher: {
        async dispatchBatch(records) {
          dispatching.seen.push(...records);
          await dispatching.during?.(records);
          return records.map((record): SqsRecordResult => ({
            messageId: record.messageId,
            status: dispatching.statusOf(record.body),
            durationMs: 0,
          }));
        },
      },
    });
    consumers.push(consumer);
    return consumer;
  };
  /** A consumer whose dispatcher holds each batch until `release()`. */
  const holdingConsumer = (url: string) => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const dispatching: Dispatching = { seen: [], statusOf: () => 'OK', during: () => held };
    return {
      consumer: consumerOf(url, { batchSize: 10 }, dispatching),
      dispatching,
      release: () => release(),
    };
  };
  const lines = (level: 'log' | 'warn' | 'error') =>
    logs.lines
      .filter((line) => line.context === 'SqsConsumer' && line.level === level)
      .map((line) => line.message);

  describe('its options', () => {
    it.each([
      [
        { terminateVisibilityTimeout: -1 },
        'terminateVisibilityTimeout must be true, false, whole seconds from 0 to 43200, or a function (message) => seconds; got -1.',
      ],
      [
        { terminateVisibilityTimeout: 1.5 },
        'terminateVisibilityTimeout must be true, false, whole seconds from 0 to 43200, or a function (message) => seconds; got 1.5.',
      ],
      [
        { terminateVisibilityTimeout: 43_201 },
        'terminateVisibilityTimeout must be true, false, whole seconds from 0 to 43200, or a function (message) => seconds; got 43201.',
      ],
      [
        { handleMessageTimeout: Number.NaN },
        'handleMessageTimeout must be a positive number of milliseconds; got NaN.',
      ],
      [
        { handleMessageTimeout: Infinity },
        'handleMessageTimeout must be a positive number of milliseconds; got Infinity.',
      ],
      [
        { handleMessageTimeout: -5 },
        'handleMessageTimeout must be a positive number of milliseconds; got -5.',
      ],
    ])('refuses %p, naming the host and the queue', (options, message) => {
      expect(() =>
        consumerOf('http://unused', options, { seen: [], statusOf: () => 'OK' }, { host: 'SqsServer' }),
      ).toThrow(`SqsServer: queue "orders": ${message}`);
    });

    it.each([0, 43_200, true, false])('takes terminateVisibilityTimeout %p', (terminateVisibilityTimeout) => {
      expect(() =>
        consumerOf('http://unused', { terminateVisibilityTimeout }, { seen: [], statusOf: () => 'OK' }),
      ).not.toThrow();
    });
  });

  it('says what it consumes when it starts, once, and that it stopped', async () => {
    const queue = await queues.create('consumer-lines');
    const consumer = consumerOf(
      queue.url,
      { batchSize: 4, visibilityTimeout: 30 },
      { seen: [], statusOf: () => 'OK' },
    );
    consumer.start();
    consumer.start();
    expect(consumer.isRunning).toBe(true);
    const plain = consumerOf(queue.url, { batchSize: 10 }, { seen: [], statusOf: () => 'OK' });
    plain.start();
    expect(lines('log')).toEqual([
      'Consuming queue "orders" (batches of 4, visibility 30 s).',
      'Consuming queue "orders" (batches of 10).',
    ]);
    await consumer.stop(5_000);
    await consumer.stop(5_000);
    expect(consumer.isRunning).toBe(false);
    expect(lines('log').slice(2)).toEqual(['Stopped consuming queue "orders".']);
  });

  it('acks what succeeded or was skipped on purpose, leaves the rest, and returns only failures that need attention sooner', async () => {
    const queue = await queues.create('consumer-statuses', { visibilityTimeout: 30 });
    const statuses: Record<string, SqsRecordStatus> = {
      ok: 'OK',
      skipped: 'SKIPPED',
      duplicate: 'DUPLICATE',
      'in-progress': 'IN_PROGRESS',
      failed: 'FAILED',
      invalid: 'INVALID',
    };
    const dispatching: Dispatching = { seen: [], statusOf: (body) => statuses[JSON.parse(body).id] };
    const consumer = consumerOf(queue.url, { batchSize: 10, terminateVisibilityTimeout: true }, dispatching);
    await queues.sendBatch(
      queue.url,
      Object.keys(statuses).map((id) => ({ id })),
    );
    consumer.start();
    await waitFor(() => dispatching.seen.length >= 6, 'the six records dispatched');
    // FAILED and INVALID come back at once (visibility 0); IN_PROGRESS keeps its 30 s; the rest are deleted.
    await waitFor(async () => (await queues.depth(queue.url)) === 3, 'the three acks deleted');
    await waitFor(
      () => dispatching.seen.filter((record) => /failed|invalid/.test(record.body)).length >= 4,
      'the failed and the invalid record redelivered at once',
    );
    expect(dispatching.seen.filter((record) => record.body.includes('in-progress'))).toHaveLength(1);
    expect(dispatching.seen[0]).toMatchObject({ eventSource: 'aws:sqs', attributes: expect.any(Object) });
  });

  describe('a terminateVisibilityTimeout function', () => {
    it.each([
      ['answers NaN', () => Number.NaN, 'it returned NaN, not a number of seconds'],
      ['answers a string', () => '10' as unknown as number, 'it returned 10, not a number of seconds'],
      [
        'throws',
        () => {
          throw new Error('no receive count');
        },
        'no receive count',
      ],
    ])('that %s is named, and the message keeps its visibility timeout', async (_what, terminate, reason) => {
      const queue = await queues.create('consumer-terminate', { visibilityTimeout: 30 });
      const dispatching: Dispatching = { seen: [], statusOf: () => 'FAILED' };
      const consumer = consumerOf(queue.url, { terminateVisibilityTimeout: terminate }, dispatching);
      const id = await queues.send(queue.url, { id: 'e1' });
      consumer.start();
      await waitFor(() => lines('error').length === 1, 'the line naming the function’s failure');
      expect(lines('error')).toEqual([
        `Queue "orders": terminateVisibilityTimeout failed for message ${id} (${reason}); it keeps its visibility timeout.`,
      ]);
      await consumer.stop(5_000);
      expect(await queues.peek(queue.url)).toEqual([]);
      expect(dispatching.seen).toHaveLength(1);
    });

    it('has its answer rounded and held to what SQS takes: a negative one brings the message back at once', async () => {
      const queue = await queues.create('consumer-clamp', { visibilityTimeout: 30 });
      const answers = [-20, 0.4];
      const dispatching: Dispatching = { seen: [], statusOf: () => 'FAILED' };
      consumerOf(
        queue.url,
        { terminateVisibilityTimeout: () => answers.shift() ?? 99_999 },
        dispatching,
      ).start();
      await queues.send(queue.url, { id: 'e1' });
      await waitFor(
        () => dispatching.seen.length === 3,
        'two redeliveries at once, then one put away',
        20_000,
      );
      // 99,999 s is over SQS's 12 hours: held to 43,200 rather than refused (no warning, not visible).
      await waitFor(async () => (await queues.peek(queue.url)).length === 0, 'the message put away');
      expect(lines('warn')).toEqual([]);
    });
  });

  it('says which messages a delete failed for, and that they come back', async () => {
    const queue = await queues.create('consumer-delete', { visibilityTimeout: 30 });
    const ids = await queues.sendBatch(queue.url, [{ id: 'a' }, { id: 'b' }]);
    const dispatching: Dispatching = {
      seen: [],
      statusOf: () => 'OK',
      // The queue goes away while the batch is handled: sqs-consumer's delete of the acks fails.
      during: async () => {
        await queues.client.send(new DeleteQueueCommand({ QueueUrl: queue.url }));
      },
    };
    consumerOf(queue.url, { batchSize: 10 }, dispatching).start();
    await waitFor(() => lines('error').length > 0, 'the failed delete reported');
    const [line] = lines('error');
    expect(line).toMatch(
      /^Queue "orders": SQS delete message failed: .* \(message\(s\) (\S+), (\S+)\)\. Messages not deleted are redelivered after their visibility timeout\.$/,
    );
    expect(line).toContain(ids[0]);
    expect(line).toContain(ids[1]);
  });

  it.each([
    [
      'the call fails (the queue is gone)',
      (url: string) => async () => {
        await queues.client.send(new DeleteQueueCommand({ QueueUrl: url }));
      },
      'The specified queue does not exist.',
    ],
    [
      'SQS refuses an entry (the message was deleted: its receipt handle no longer holds)',
      (url: string) => async (records: readonly SqsRecordLike[]) => {
        for (const { receiptHandle } of records) {
          await queues.client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: receiptHandle }));
        }
      },
      '0: ReceiptHandleIsInvalid The input receipt handle is invalid.',
    ],
  ])(
    'says when returning a failure sooner fails because %s, naming how many messages and why',
    async (_what, breaking, why) => {
      const queue = await queues.create('consumer-visibility', { visibilityTimeout: 30 });
      const dispatching: Dispatching = { seen: [], statusOf: () => 'FAILED', during: breaking(queue.url) };
      consumerOf(queue.url, { terminateVisibilityTimeout: 0 }, dispatching).start();
      await queues.send(queue.url, { id: 'a' });
      await waitFor(() => lines('warn').length > 0, 'the failed change reported');
      expect(lines('warn')).toEqual([
        `Queue "orders": could not return failed message(s) sooner (1 message(s): ${why}); ` +
          'they reappear after their visibility timeout.',
      ]);
    },
  );

  it('hands the dispatcher each message attribute the producer set, as Lambda gives them', async () => {
    const queue = await queues.create('consumer-attributes');
    const dispatching: Dispatching = { seen: [], statusOf: () => 'OK' };
    consumerOf(queue.url, {}, dispatching).start();
    await queues.client.send(
      new SendMessageCommand({
        QueueUrl: queue.url,
        MessageBody: '{"id":"a"}',
        MessageAttributes: {
          tenant: { DataType: 'String', StringValue: 'acme' },
          attempt: { DataType: 'Number', StringValue: '2' },
          signature: { DataType: 'Binary', BinaryValue: Buffer.from('signed') },
        },
      }),
    );
    await waitFor(() => dispatching.seen.length === 1, 'the message dispatched');
    expect(dispatching.seen[0].messageAttributes).toEqual({
      tenant: { dataType: 'String', stringValue: 'acme' },
      attempt: { dataType: 'Number', stringValue: '2' },
      signature: { dataType: 'Binary', binaryValue: Buffer.from('signed').toString('base64') },
    });
  });

  it('starts on a FIFO queue without sqs-consumer’s warning, which is about its per-message mode', async () => {
    const queue = await queues.create('consumer-fifo', { fifo: true });
    // sqs-consumer prints its warnings with console.log.
    const printed = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      consumerOf(queue.url, {}, { seen: [], statusOf: () => 'OK' }).start();
      expect(printed).not.toHaveBeenCalled();
    } finally {
      printed.mockRestore();
    }
    expect(lines('log')).toEqual([expect.stringMatching(/^Consuming queue "orders"/)]);
  });

  it.each([
    ['processing_error', 'FAILED'],
    ['processing_error', 'INVALID'],
  ] as const)(
    'gives a %s listener the status of a %s record that carries no error, with its message',
    async (event, status) => {
      const queue = await queues.create('consumer-status-error', { visibilityTimeout: 30 });
      const consumer = consumerOf(queue.url, {}, { seen: [], statusOf: () => status });
      const heard: Array<{ error: Error; message: Message }> = [];
      consumer.sqsConsumer.on(event, (error, message) => heard.push({ error, message: message as Message }));
      const id = await queues.send(queue.url, { id: 'a' });
      consumer.start();
      await waitFor(() => heard.length === 1, `the ${event} event`);
      expect(heard[0].error.message).toBe(`status ${status}`);
      expect(heard[0].message.MessageId).toBe(id);
    },
  );

  describe('a batch received while it stops (sqs-consumer hands over a receive that raced the stop)', () => {
    /** A stopped consumer, the batch handler it gave sqs-consumer, and two messages received from its queue. */
    const stoppedWithBatch = async (prefix: string) => {
      const queue = await queues.create(prefix, { visibilityTimeout: 30 });
      let handleBatch!: (messages: Message[]) => Promise<Message[] | void>;
      const dispatching: Dispatching = { seen: [], statusOf: () => 'OK' };
      const consumer = consumerOf(queue.url, {}, dispatching, {
        Consumer: {
          create(options: Parameters<typeof Consumer.create>[0]) {
            handleBatch = options.handleMessageBatch!;
            return Consumer.create(options);
          },
        } as typeof Consumer,
      });
      await queues.sendBatch(queue.url, [{ id: 'a' }, { id: 'b' }]);
      const messages: Message[] = [];
      while (messages.length < 2) {
        const { Messages = [] } = await queues.client.send(
          new ReceiveMessageCommand({ QueueUrl: queue.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
        );
        messages.push(...Messages);
      }
      return { url: queue.url, consumer, dispatching, messages, handleBatch };
    };

    it('is not handled and is visible again at once, not after its visibility timeout', async () => {
      const { url, dispatching, messages, handleBatch } = await stoppedWithBatch('consumer-release');
      expect(await handleBatch(messages)).toEqual([]);
      expect(dispatching.seen).toEqual([]);
      await waitFor(async () => (await queues.depth(url)) === 2, 'both messages visible again');
      expect(lines('warn')).toEqual([]);
    });

    it('says when releasing it fails, naming each entry SQS refused', async () => {
      const { url, messages, handleBatch } = await stoppedWithBatch('consumer-release-refused');
      for (const { ReceiptHandle } of messages) {
        await queues.client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle }));
      }
      await handleBatch(messages);
      expect(lines('warn')).toEqual([
        'Queue "orders": could not release the message(s) received while stopping (2 message(s): ' +
          '0: ReceiptHandleIsInvalid The input receipt handle is invalid.; ' +
          '1: ReceiptHandleIsInvalid The input receipt handle is invalid.); they reappear after their visibility timeout.',
      ]);
    });
  });

  it('names an entry SQS refused without a message by its code alone', async () => {
    // fauxqs always explains a refused entry; SQS's API leaves the message optional.
    const queue = await queues.create('consumer-refused-bare', { visibilityTimeout: 30 });
    const client: SQSClient = Object.create(queues.client);
    client.send = ((command: Parameters<SQSClient['send']>[0]) =>
      command instanceof ChangeMessageVisibilityBatchCommand
        ? Promise.resolve({
            Successful: [],
            Failed: [{ Id: '0', Code: 'InternalError', SenderFault: false }],
          })
        : queues.client.send(command)) as SQSClient['send'];
    consumerOf(
      queue.url,
      { terminateVisibilityTimeout: 0 },
      { seen: [], statusOf: () => 'FAILED' },
      { client },
    ).start();
    await queues.send(queue.url, { id: 'a' });
    await waitFor(() => lines('warn').length > 0, 'the refused change reported');
    expect(lines('warn')).toEqual([
      'Queue "orders": could not return failed message(s) sooner (1 message(s): 0: InternalError); ' +
        'they reappear after their visibility timeout.',
    ]);
  });

  it('counts the messages of the batches in flight', async () => {
    const queue = await queues.create('consumer-in-flight', { visibilityTimeout: 30 });
    const { consumer, dispatching, release } = holdingConsumer(queue.url);
    await queues.sendBatch(queue.url, [{ id: 'a' }, { id: 'b' }, { id: 'c' }]);
    consumer.start();
    await waitFor(() => dispatching.seen.length === 3, 'the batch in the handler');
    expect(consumer.inFlightCount).toBe(3);
    release();
    await waitFor(() => consumer.inFlightCount === 0, 'the batch done');
    await consumer.stop(5_000);
    expect(lines('log').at(-1)).toBe('Stopped consuming queue "orders".');
  });

  it('says a stop waited for the batch in flight', async () => {
    const queue = await queues.create('consumer-drain', { visibilityTimeout: 30 });
    const { consumer, dispatching, release } = holdingConsumer(queue.url);
    await queues.send(queue.url, { id: 'a' });
    consumer.start();
    await waitFor(() => dispatching.seen.length === 1, 'the batch in the handler');
    const stopped = consumer.stop(10_000);
    release();
    await stopped;
    expect(lines('log').at(-1)).toBe('Stopped consuming queue "orders" (in-flight batch finished).');
    expect(lines('warn')).toEqual([]);
    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'the message acked');
  });

  it('names the messages a stop left in flight after its timeout', async () => {
    const queue = await queues.create('consumer-left', { visibilityTimeout: 30 });
    const { consumer, dispatching, release } = holdingConsumer(queue.url);
    await queues.sendBatch(queue.url, [{ id: 'a' }, { id: 'b' }]);
    consumer.start();
    await waitFor(() => dispatching.seen.length === 2, 'the batch in the handler', 20_000);
    const ids = dispatching.seen.map((record) => record.messageId).join(', ');
    await consumer.stop(50);
    release();
    expect(lines('warn')).toEqual([
      `Queue "orders": 2 message(s) still in flight after 50 ms (${ids}); shutting down without waiting for them. ` +
        'Those not acked by then are redelivered after their visibility timeout (raise shutdownTimeoutMs if handlers need longer).',
    ]);
  });

  describe('a failed receive (as sqs-consumer reports it: an error without messages)', () => {
    const failing = async (options: SqsConsumerOptions = {}) => {
      const queue = await queues.create('consumer-receive');
      const dispatching: Dispatching = { seen: [], statusOf: () => 'OK' };
      const consumer = consumerOf(queue.url, options, dispatching);
      consumer.start();
      const fail = (error: Partial<Error> & Record<string, unknown>) =>
        consumer.sqsConsumer.emit(
          'error',
          Object.assign(new Error(error.message ?? 'boom'), error),
          undefined,
        );
      return { consumer, fail, url: queue.url, dispatching };
    };
    const receiveLines = () => lines('warn').filter((line) => line.includes('receive failed'));

    it('waits sqs-consumer’s own pause after the errors it pauses for, and says the whole delay', async () => {
      const { fail, url } = await failing();
      const codes = [
        'CredentialsError',
        'UnknownEndpoint',
        'CredentialsProviderError',
        'InvalidAddress',
        'InvalidSecurity',
        'RequestThrottled',
        'OverLimit',
      ];
      for (const code of codes) fail({ code, message: `SQS receive message failed: ${code}.` });
      expect(receiveLines()).toEqual(
        codes.map((code, i) =>
          expect.stringMatching(
            new RegExp(
              `^Queue "orders" \\(${url.replace(/[.?]/g, '\\$&')}\\): receive failed \\(${code}\\); next receive in [12]\\d\\.\\d s \\(${i + 1} in a row\\)\\.$`,
            ),
          ),
        ),
      );
    });

    it('counts a 403 as a pause of authenticationErrorTimeout, and any other error as the polling wait', async () => {
      const { fail } = await failing({ authenticationErrorTimeout: 3_000, pollingWaitTimeMs: 6_000 });
      fail({ statusCode: 403, message: 'denied' });
      fail({ statusCode: 500, code: 'InternalError', message: 'oops' });
      expect(receiveLines()).toEqual([
        expect.stringMatching(/receive failed \(denied\); next receive in 3\.\d s \(1 in a row\)\.$/),
        expect.stringMatching(/receive failed \(oops\); next receive in 6\.\d s \(2 in a row\)\.$/),
      ]);
    });

    it('says a pause under a second in milliseconds, and reads the cause without sqs-consumer’s prefix or final dots', async () => {
      const { fail } = await failing();
      fail({ message: 'SQS receive message failed: endpoint v1.2 refused...' });
      fail({ message: 'proxy: SQS receive message failed: timeout' });
      expect(receiveLines()).toEqual([
        expect.stringMatching(
          /receive failed \(endpoint v1\.2 refused\); next receive in (1[2-9]\d|2[0-5]\d) ms \(1 in a row\)\.$/,
        ),
        expect.stringMatching(
          /receive failed \(proxy: SQS receive message failed: timeout\); next receive in \d+ ms/,
        ),
      ]);
    });

    it.each([
      ['code', 'QueueDoesNotExist'],
      ['Code', 'AWS.SimpleQueueService.NonExistentQueue'],
      ['name', 'AWS.SimpleQueueService.NonExistentQueue'],
    ])('explains a missing queue once, whether its %s says %s', async (field, value) => {
      const { fail, url } = await failing();
      fail({ [field]: value, message: 'The specified queue does not exist.' });
      fail({ [field]: value, message: 'The specified queue does not exist.' });
      expect(lines('error')).toEqual([
        expect.stringMatching(
          new RegExp(
            `^Queue "orders" does not exist: ${url.replace(/[.?]/g, '\\$&')} \\(The specified queue does not exist\\)\\. ` +
              "Check the URL, and that the client's region and account are the queue's\\. Polling retries \\(next " +
              'receive in (\\d+ ms|\\d+\\.\\d s)\\); set failFastOnStartup: true to refuse to start instead\\.$',
          ),
        ),
      ]);
      // The second is a receive that failed again: the short line.
      expect(receiveLines()).toHaveLength(1);
    });

    it('says when receiving works again, after how many failures; nothing while it works', async () => {
      const { fail, url, dispatching } = await failing();
      fail({ message: 'one' });
      fail({ message: 'two' });
      await waitFor(
        () => lines('log').includes('Queue "orders": receiving again after 2 failed receive(s).'),
        'the line saying receiving works again',
      );
      // Later receives that work say nothing.
      await queues.send(url, { id: 'after' });
      await waitFor(() => dispatching.seen.length === 1, 'a message received after the recovery');
      expect(lines('log').filter((line) => line.includes('receiving again'))).toHaveLength(1);
    });

    it('is the aborted long poll while stopping: nothing said', async () => {
      const { consumer, fail } = await failing();
      await consumer.stop(5_000);
      fail({ message: 'aborted' });
      expect(receiveLines()).toEqual([]);
    });
  });

  it('names the queue and its URL when asked whether it exists', async () => {
    const queue = await queues.create('consumer-problem');
    expect(
      await consumerOf(queue.url, {}, { seen: [], statusOf: () => 'OK' }).queueProblem(),
    ).toBeUndefined();
    const missing = queue.url.replace(/consumer-problem[^/]*$/, 'no-such-queue');
    expect(await consumerOf(missing, {}, { seen: [], statusOf: () => 'OK' }).queueProblem()).toBe(
      `queue "orders" does not exist: ${missing} (The specified queue does not exist); check the URL, and that ` +
        "the client's region and account are the queue's",
    );
  });

  it('says a queue could not be checked when SQS does not answer, naming the queue, its URL and the cause', async () => {
    const queue = await queues.create('consumer-unreachable');
    // Nothing listens on port 9: the check fails before SQS could say whether the queue exists.
    const client = new SQSClient({ ...fauxqsClientConfig(), endpoint: 'http://127.0.0.1:9', maxAttempts: 1 });
    try {
      const problem = await consumerOf(
        queue.url,
        {},
        { seen: [], statusOf: () => 'OK' },
        { client },
      ).queueProblem();
      expect(problem).toMatch(
        new RegExp(
          `^queue "orders" could not be checked at ${queue.url.replace(/[.?]/g, '\\$&')} \\(.*ECONNREFUSED.*\\)$`,
        ),
      );
    } finally {
      client.destroy();
    }
  });
});
