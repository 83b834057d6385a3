import { BatchAnswer, OutgoingEntry, sendInBatches } from './sqs-batch.sender';

const entries = (sizes: number[]): OutgoingEntry<number>[] =>
  sizes.map((size, index) => ({ index, event: index, entry: { Id: String(index) }, size }));

describe('sendInBatches', () => {
  const options = { maxAttempts: 3, retryDelayMs: 0 };
  const accept = async (batch: Array<{ Id: string }>): Promise<BatchAnswer> => ({
    Successful: batch.map((entry) => ({ Id: entry.Id, MessageId: `m-${entry.Id}` })),
  });

  it('cuts batches at 10 entries and at 256 KiB, in order', async () => {
    const calls: string[][] = [];
    const send = async (batch: Array<{ Id: string }>) => {
      calls.push(batch.map((entry) => entry.Id));
      return accept(batch);
    };
    await sendInBatches(entries(Array(23).fill(10)), send, options);
    expect(calls.map((call) => call.length)).toEqual([10, 10, 3]);
    calls.length = 0;
    await sendInBatches(entries([200_000, 100_000, 300_000, 1]), send, options);
    expect(calls).toEqual([['0'], ['1'], ['2'], ['3']]);
  });

  it('retries a call that failed whole when the error says it may pass later, and reports it otherwise', async () => {
    let calls = 0;
    const throttled = async (batch: Array<{ Id: string }>) => {
      if (++calls === 1)
        throw Object.assign(new Error('Rate exceeded'), {
          name: 'ThrottlingException',
          $fault: 'client',
          $retryable: { throttling: true },
        });
      return accept(batch);
    };
    expect((await sendInBatches(entries([1, 1]), throttled, options)).sent).toHaveLength(2);
    const missing = async () => {
      throw Object.assign(new Error('The specified queue does not exist.'), {
        name: 'QueueDoesNotExist',
        $fault: 'client',
        $metadata: {},
      });
    };
    const { failed } = await sendInBatches(entries([1]), missing, options);
    expect(failed).toEqual([
      {
        event: 0,
        index: 0,
        code: 'QueueDoesNotExist',
        message: 'The specified queue does not exist.',
        senderFault: true,
        attempts: 1,
      },
    ]);
  });

  it('gives up on a service-side failure after maxAttempts, reporting the attempts', async () => {
    const failing = async (batch: Array<{ Id: string }>): Promise<BatchAnswer> => ({
      Failed: batch.map((entry) => ({ Id: entry.Id, Code: 'InternalError', SenderFault: false })),
    });
    const { sent, failed } = await sendInBatches(entries([1]), failing, options);
    expect(sent).toEqual([]);
    expect(failed[0]).toMatchObject({ code: 'InternalError', senderFault: false, attempts: 3 });
  });

  it('fills a batch up to exactly 10 entries and 256 KiB, and starts the next one past either', async () => {
    const calls: number[][] = [];
    const send = async (batch: Array<{ Id: string }>) => {
      calls.push(batch.map((entry) => Number(entry.Id)));
      return accept(batch);
    };
    await sendInBatches(entries([131_072, 131_072, 131_073, 131_072, 1]), send, options);
    expect(calls).toEqual([[0, 1], [2], [3, 4]]);
    calls.length = 0;
    await sendInBatches(entries(Array(11).fill(1)), send, options);
    expect(calls.map((call) => call.length)).toEqual([10, 1]);
  });

  it('retries only the entries the service failed, and answers every entry in the order given', async () => {
    const calls: string[][] = [];
    const flaky = async (batch: Array<{ Id: string }>): Promise<BatchAnswer> => {
      calls.push(batch.map((entry) => entry.Id));
      if (calls.length > 1)
        return {
          Successful: batch.map((entry) => ({
            Id: entry.Id,
            MessageId: `m-${entry.Id}`,
            SequenceNumber: `s-${entry.Id}`,
          })),
        };
      return {
        // Answered out of order, as SQS may.
        Successful: [{ Id: '2', MessageId: 'm-2' }],
        Failed: [
          { Id: '1', Code: 'InvalidMessageContents', Message: 'bad', SenderFault: true },
          { Id: '0', Code: 'InternalError', Message: 'try again', SenderFault: false },
        ],
      };
    };
    const { sent, failed } = await sendInBatches(entries([1, 1, 1]), flaky, options);
    expect(calls).toEqual([['0', '1', '2'], ['0']]);
    expect(sent).toEqual([
      { event: 0, index: 0, messageId: 'm-0', sequenceNumber: 's-0' },
      { event: 2, index: 2, messageId: 'm-2' },
    ]);
    expect(failed).toEqual([
      { event: 1, index: 1, code: 'InvalidMessageContents', message: 'bad', senderFault: true, attempts: 1 },
    ]);
  });

  it('keeps both lists in the order given when answers arrive out of order across batches', async () => {
    let call = 0;
    const send = async (batch: Array<{ Id: string }>): Promise<BatchAnswer> => {
      call++;
      // The first batch's first entry fails once: it is sent (and answered) after the rest of its batch.
      if (call === 1) {
        return {
          Successful: batch.slice(1).map((entry) => ({ Id: entry.Id, MessageId: `m-${entry.Id}` })),
          Failed: [{ Id: batch[0].Id, Code: 'InternalError', SenderFault: false }],
        };
      }
      return accept(batch);
    };
    const { sent } = await sendInBatches(entries(Array(12).fill(1)), send, options);
    expect(sent.map((message) => message.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const refusing = async (batch: Array<{ Id: string }>): Promise<BatchAnswer> => ({
      Failed: [...batch].reverse().map((entry) => ({ Id: entry.Id, Code: 'Bad', SenderFault: true })),
    });
    const { failed } = await sendInBatches(entries([1, 1, 1]), refusing, options);
    expect(failed.map((failure) => failure.index)).toEqual([0, 1, 2]);
  });

  it('retries an entry the answer does not mention, then reports it as not answered (a service-side failure)', async () => {
    let calls = 0;
    const silent = async (): Promise<BatchAnswer> => {
      calls++;
      return {};
    };
    const { failed } = await sendInBatches(entries([1]), silent, options);
    expect(calls).toBe(3);
    expect(failed).toEqual([
      {
        event: 0,
        index: 0,
        code: 'NoAnswer',
        message: 'the service answered neither success nor failure for this entry',
        senderFault: false,
        attempts: 3,
      },
    ]);
  });

  it("takes a failure that does not say whose fault it is as the sender's (not retried), with a code and message still given", async () => {
    let calls = 0;
    const vague = async (batch: Array<{ Id: string }>): Promise<BatchAnswer> => {
      calls++;
      return { Failed: batch.map((entry) => ({ Id: entry.Id })) };
    };
    const { failed } = await sendInBatches(entries([1]), vague, options);
    expect(calls).toBe(1);
    expect(failed).toEqual([
      { event: 0, index: 0, code: 'Unknown', message: '', senderFault: true, attempts: 1 },
    ]);
  });

  it('retries a whole call that failed on the service side, on throttling by name, or without any answer; not a client error', async () => {
    const failingOnce = (error: unknown) => {
      let calls = 0;
      return async (batch: Array<{ Id: string }>) => {
        if (++calls === 1) throw error;
        return accept(batch);
      };
    };
    const cases: Array<[string, unknown, boolean]> = [
      [
        'a server fault',
        Object.assign(new Error('oops'), { name: 'InternalError', $fault: 'server', $metadata: {} }),
        true,
      ],
      [
        'TooManyRequestsException',
        Object.assign(new Error('slow down'), {
          name: 'TooManyRequestsException',
          $fault: 'client',
          $metadata: {},
        }),
        true,
      ],
      [
        'RequestLimitExceeded',
        Object.assign(new Error('slow down'), {
          name: 'RequestLimitExceeded',
          $fault: 'client',
          $metadata: {},
        }),
        true,
      ],
      [
        'a connection reset (no answer)',
        Object.assign(new Error('socket hang up'), { name: 'Error', code: 'ECONNRESET' }),
        true,
      ],
      [
        'a client error',
        Object.assign(new Error('Access denied'), { name: 'AccessDenied', $fault: 'client', $metadata: {} }),
        false,
      ],
      ['an answer without a fault', Object.assign(new Error('odd'), { name: 'Odd', $metadata: {} }), false],
    ];
    for (const [what, error, retried] of cases) {
      const { sent, failed } = await sendInBatches(entries([1]), failingOnce(error), options);
      expect({
        what,
        sent: sent.length,
        failed: failed.map((failure) => [failure.code, failure.senderFault]),
      }).toEqual({
        what,
        sent: retried ? 1 : 0,
        failed: retried ? [] : [[(error as Error).name, true]],
      });
    }
    // A thrown non-error (no fault, no answer) is retried like a lost connection.
    const thrown = await sendInBatches(entries([1]), failingOnce('a string'), options);
    expect([thrown.sent.length, thrown.failed]).toEqual([1, []]);
  });

  it('waits before each retry, up to retryDelayMs doubled at each attempt', async () => {
    jest.useFakeTimers();
    const random = jest.spyOn(Math, 'random').mockReturnValue(0.999);
    try {
      const times: number[] = [];
      const failing = async (batch: Array<{ Id: string }>): Promise<BatchAnswer> => {
        times.push(Date.now());
        return {
          Failed: batch.map((entry) => ({ Id: entry.Id, Code: 'InternalError', SenderFault: false })),
        };
      };
      const sending = sendInBatches(entries([1]), failing, { maxAttempts: 4, retryDelayMs: 100 });
      await jest.advanceTimersByTimeAsync(1_000);
      await sending;
      const waits = times.slice(1).map((time, i) => time - times[i]);
      expect(waits).toEqual([99, 199, 399]);
    } finally {
      random.mockRestore();
      jest.useRealTimers();
    }
  });

  it('sends nothing for no entries, and an entry over 256 KiB alone, never an empty batch', async () => {
    const calls: string[][] = [];
    const send = async (batch: Array<{ Id: string }>) => {
      calls.push(batch.map((entry) => entry.Id));
      return accept(batch);
    };
    expect(await sendInBatches(entries([]), send, options)).toEqual({ sent: [], failed: [] });
    await sendInBatches(entries([300_000, 1]), send, options);
    expect(calls).toEqual([['0'], ['1']]);
  });

  it('orders the failures as given even when a retried entry fails after a refused one', async () => {
    const send = async (batch: Array<{ Id: string }>): Promise<BatchAnswer> => ({
      Failed: batch.map((entry) =>
        entry.Id === '0'
          ? { Id: '0', Code: 'InternalError', SenderFault: false }
          : { Id: entry.Id, Code: 'InvalidMessageContents', SenderFault: true },
      ),
    });
    const { failed } = await sendInBatches(entries([1, 1]), send, options);
    expect(failed.map((failure) => [failure.index, failure.attempts])).toEqual([
      [0, 3],
      [1, 1],
    ]);
  });

  it('reports a success without a message id as an empty id, and no sequence number for a standard queue', async () => {
    const send = async (): Promise<BatchAnswer> => ({ Successful: [{ Id: '0' }] });
    const { sent } = await sendInBatches(entries([1]), send, options);
    expect(sent).toStrictEqual([{ event: 0, index: 0, messageId: '' }]);
  });

  it('fails a call that threw nothing usable without throwing itself, and does not retry a client error that had no answer', async () => {
    let calls = 0;
    const throwsUndefined = async (batch: Array<{ Id: string }>) => {
      if (++calls === 1) throw undefined;
      return accept(batch);
    };
    expect((await sendInBatches(entries([1]), throwsUndefined, options)).sent).toHaveLength(1);
    const anonymous = async () => {
      throw { $fault: 'client', $metadata: {} };
    };
    expect((await sendInBatches(entries([1]), anonymous, options)).failed).toEqual([
      { event: 0, index: 0, code: 'Error', message: '[object Object]', senderFault: true, attempts: 1 },
    ]);
    const refusedBeforeSending = async () => {
      throw Object.assign(new Error('bad request'), { name: 'ValidationError', $fault: 'client' });
    };
    expect((await sendInBatches(entries([1]), refusedBeforeSending, options)).failed).toEqual([
      { event: 0, index: 0, code: 'ValidationError', message: 'bad request', senderFault: true, attempts: 1 },
    ]);
  });
});
