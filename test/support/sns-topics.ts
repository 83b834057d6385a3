import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { CreateTopicCommand, DeleteTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { fauxqsClientConfig } from './sqs-queues';

let counter = 0;

/** SNS topics on the fauxqs the Jest global setup started (it speaks SNS on the same endpoint). */
export class TestTopics {
  readonly client = new SNSClient(fauxqsClientConfig());
  private readonly sqs = new SQSClient(fauxqsClientConfig());
  private readonly created: string[] = [];

  /** A uniquely named topic (`.fifo` for a FIFO topic); returns its ARN. */
  async create(prefix: string, options: { fifo?: boolean } = {}): Promise<string> {
    const name = `${prefix}-${process.pid}-${Date.now().toString(36)}-${++counter}${options.fifo ? '.fifo' : ''}`;
    const { TopicArn } = await this.client.send(
      new CreateTopicCommand({ Name: name, Attributes: options.fifo ? { FifoTopic: 'true' } : {} }),
    );
    this.created.push(TopicArn!);
    return TopicArn!;
  }

  /** Subscribes a queue, with raw message delivery or without (the body is then an SNS notification). */
  async subscribe(topicArn: string, queueUrl: string, options: { raw: boolean }): Promise<void> {
    const { Attributes = {} } = await this.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    await this.client.send(
      new SubscribeCommand({
        TopicArn: topicArn,
        Protocol: 'sqs',
        Endpoint: Attributes.QueueArn,
        Attributes: options.raw ? { RawMessageDelivery: 'true' } : {},
      }),
    );
  }

  async deleteAll(): Promise<void> {
    await Promise.all(
      this.created.map((arn) =>
        this.client.send(new DeleteTopicCommand({ TopicArn: arn })).catch(() => undefined),
      ),
    );
    this.client.destroy();
    this.sqs.destroy();
  }
}
