import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
  SQSClientConfig,
} from '@aws-sdk/client-sqs';
import { queueDepth } from '../../sample/demo/demo-queues';

/** Client settings for the fauxqs the Jest global setup started (`SQS_ENDPOINT`). */
export function fauxqsClientConfig(): SQSClientConfig {
  const endpoint = process.env.SQS_ENDPOINT;
  if (!endpoint) throw new Error('SQS_ENDPOINT is not set: the e2e specs run under the Jest global setup');
  return { endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } };
}

export interface TestQueueOptions {
  fifo?: boolean;
  /** Queue visibility timeout in seconds (default 1, so redeliveries come quickly). */
  visibilityTimeout?: number;
  /** Give the queue a dead-letter queue with this maxReceiveCount. */
  maxReceiveCount?: number;
}

export interface TestQueue {
  name: string;
  url: string;
  dlqUrl?: string;
}

let counter = 0;

/**
 * Creates uniquely named queues on fauxqs (spec files run in parallel against one server), sends
 * to them and reads their state, and deletes them at the end.
 */
export class TestQueues {
  readonly client: SQSClient;
  private readonly created: string[] = [];

  constructor(config: SQSClientConfig = fauxqsClientConfig()) {
    this.client = new SQSClient(config);
  }

  async create(prefix: string, options: TestQueueOptions = {}): Promise<TestQueue> {
    const suffix = options.fifo ? '.fifo' : '';
    const name = `${prefix}-${process.pid}-${Date.now().toString(36)}-${++counter}`;
    const fifo: Record<string, string> = options.fifo ? { FifoQueue: 'true' } : {};
    let dlqUrl: string | undefined;
    const attributes: Record<string, string> = {
      ...fifo,
      VisibilityTimeout: String(options.visibilityTimeout ?? 1),
    };
    if (options.maxReceiveCount !== undefined) {
      dlqUrl = await this.createQueue(`${name}-dlq${suffix}`, fifo);
      const arn = await this.attribute(dlqUrl, 'QueueArn');
      attributes.RedrivePolicy = JSON.stringify({
        deadLetterTargetArn: arn,
        maxReceiveCount: options.maxReceiveCount,
      });
    }
    const url = await this.createQueue(`${name}${suffix}`, attributes);
    return { name: `${name}${suffix}`, url, dlqUrl };
  }

  /** Sends one body (an object is JSON-encoded); returns the message id. */
  async send(
    url: string,
    body: unknown,
    fifo?: { groupId: string; deduplicationId?: string },
  ): Promise<string> {
    const { MessageId } = await this.client.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: typeof body === 'string' ? body : JSON.stringify(body),
        MessageGroupId: fifo?.groupId,
        MessageDeduplicationId: fifo ? (fifo.deduplicationId ?? `${Date.now()}-${++counter}`) : undefined,
      }),
    );
    return MessageId!;
  }

  /** Sends up to 10 bodies in one call, so they are likely received in one batch. */
  async sendBatch(url: string, bodies: unknown[]): Promise<string[]> {
    const { Successful, Failed } = await this.client.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: bodies.map((body, index) => ({ Id: String(index), MessageBody: JSON.stringify(body) })),
      }),
    );
    if (Failed?.length) throw new Error(`SendMessageBatch failed: ${JSON.stringify(Failed)}`);
    return bodies.map((_, index) => Successful!.find((entry) => entry.Id === String(index))!.MessageId!);
  }

  /** Messages in the queue: visible, in flight and delayed. */
  depth(url: string): Promise<number> {
    return queueDepth(this.client, url);
  }

  /** Receives (and leaves) what is visible now, with every attribute. */
  async peek(url: string): Promise<Message[]> {
    const { Messages = [] } = await this.client.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageSystemAttributeNames: ['All'],
      }),
    );
    return Messages;
  }

  async deleteAll(): Promise<void> {
    await Promise.all(
      this.created.map((url) =>
        this.client.send(new DeleteQueueCommand({ QueueUrl: url })).catch(() => undefined),
      ),
    );
    this.client.destroy();
  }

  private async createQueue(name: string, attributes: Record<string, string>): Promise<string> {
    const { QueueUrl } = await this.client.send(
      new CreateQueueCommand({ QueueName: name, Attributes: attributes }),
    );
    this.created.push(QueueUrl!);
    return QueueUrl!;
  }

  private async attribute(url: string, name: 'QueueArn'): Promise<string> {
    const { Attributes = {} } = await this.client.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: [name] }),
    );
    return Attributes[name]!;
  }
}

/**
 * Polls `probe` until it returns something truthy, and returns it; fails with `what` after
 * `timeoutMs`. Conditions with deadlines instead of sleeps.
 */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  what: string,
  timeoutMs = 30_000,
  intervalMs = 25,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
