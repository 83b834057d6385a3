import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';

/** The queues of one demo run: the orders queue and its dead-letter queue. */
export interface DemoQueues {
  url: string;
  dlqUrl: string;
  /** Deletes both. */
  delete(): Promise<void>;
}

/** After this many receives a message goes to the dead-letter queue. */
export const MAX_RECEIVE_COUNT = 5;

/** Creates `orders-demo-<run>` with a redrive policy to `orders-demo-<run>-dlq`. */
export async function createDemoQueues(
  client: SQSClient,
  runId: string,
  visibilityTimeout: number,
): Promise<DemoQueues> {
  const create = async (name: string, attributes: Record<string, string>) =>
    (await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl!;
  const dlqUrl = await create(`orders-demo-${runId}-dlq`, {});
  const dlqArn = await attribute(client, dlqUrl, 'QueueArn');
  const url = await create(`orders-demo-${runId}`, {
    VisibilityTimeout: String(visibilityTimeout),
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: MAX_RECEIVE_COUNT }),
  });
  return {
    url,
    dlqUrl,
    delete: async () => {
      await Promise.all(
        [url, dlqUrl].map((queueUrl) => client.send(new DeleteQueueCommand({ QueueUrl: queueUrl }))),
      );
    },
  };
}

/** Messages in a queue: visible, in flight and delayed. */
export async function queueDepth(client: SQSClient, url: string): Promise<number> {
  const { Attributes = {} } = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  return (
    Number(Attributes.ApproximateNumberOfMessages ?? 0) +
    Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0) +
    Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0)
  );
}

async function attribute(client: SQSClient, url: string, name: 'QueueArn'): Promise<string> {
  const { Attributes = {} } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: [name] }),
  );
  return Attributes[name]!;
}
