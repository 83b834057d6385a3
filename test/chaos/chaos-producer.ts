import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';

/** How many copies of each kind the producer sent. */
export interface ProducerCounts {
  /** Every message sent. */
  messages: number;
  firstCopies: number;
  inFlightRetries: number;
  lateRetries: number;
  burstCopies: number;
  poison: number;
}

/** What a message is a copy of. */
export type CopyKind = Exclude<keyof ProducerCounts, 'messages'>;

const PARALLEL_BATCHES = 4;

/**
 * Sends the run's messages to the queue. Every copy of an event is its own message with its own
 * message id, exactly what a producer retry is: only the payload's `id` ties them together.
 */
export class ChaosProducer {
  readonly counts: ProducerCounts = {
    messages: 0,
    firstCopies: 0,
    inFlightRetries: 0,
    lateRetries: 0,
    burstCopies: 0,
    poison: 0,
  };

  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  /** Sends messages in batches of 10, a few batches at a time, in order. */
  async send(messages: ReadonlyArray<{ body: string; kind: CopyKind }>): Promise<void> {
    const batches: string[][] = [];
    for (let i = 0; i < messages.length; i += 10) {
      batches.push(messages.slice(i, i + 10).map((message) => message.body));
    }
    for (let i = 0; i < batches.length; i += PARALLEL_BATCHES) {
      await Promise.all(batches.slice(i, i + PARALLEL_BATCHES).map((batch) => this.sendBatch(batch)));
    }
    for (const { kind } of messages) this.counted(kind, 1);
  }

  /** Sends `copies` copies of one body at the same moment, one request each. */
  async burst(body: string, copies: number): Promise<void> {
    await Promise.all(
      Array.from({ length: copies }, () =>
        this.client.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: body })),
      ),
    );
    this.counted('burstCopies', copies);
  }

  private async sendBatch(bodies: string[]): Promise<void> {
    const { Failed } = await this.client.send(
      new SendMessageBatchCommand({
        QueueUrl: this.queueUrl,
        Entries: bodies.map((body, index) => ({ Id: String(index), MessageBody: body })),
      }),
    );
    if (Failed?.length) throw new Error(`SendMessageBatch failed: ${JSON.stringify(Failed)}`);
  }

  private counted(kind: CopyKind, count: number): void {
    this.counts[kind] += count;
    this.counts.messages += count;
  }
}
