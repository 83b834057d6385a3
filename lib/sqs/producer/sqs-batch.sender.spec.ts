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
});
