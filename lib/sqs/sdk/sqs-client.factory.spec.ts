import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { SqsClientFactory } from './sqs-client.factory';

describe('SqsClientFactory', () => {
  it('uses a client instance as it is and never destroys it', async () => {
    const factory = new SqsClientFactory();
    const own = new SQSClient({ region: 'us-east-1' });
    const destroy = jest.spyOn(own, 'destroy');
    await expect(factory.clientFor(own)).resolves.toBe(own);
    factory.destroy();
    expect(destroy).not.toHaveBeenCalled();
    own.destroy();
  });

  it('builds one client per configuration, and destroys what it built', async () => {
    const factory = new SqsClientFactory();
    const config = { region: 'us-east-1', endpoint: process.env.SQS_ENDPOINT };
    const first = await factory.clientFor(config);
    expect(await factory.clientFor(config)).toBe(first);
    expect(await factory.clientFor({ ...config })).not.toBe(first);
    const destroy = jest.spyOn(first, 'destroy');
    factory.destroy();
    expect(destroy).toHaveBeenCalled();
  });

  it('honours an explicit endpoint even when the queue URL names another host', async () => {
    const factory = new SqsClientFactory();
    const client = await factory.clientFor({
      region: 'us-east-1',
      endpoint: process.env.SQS_ENDPOINT,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    // fauxqs hands out URLs on sqs.us-east-1.localhost, which does not resolve: only the explicit
    // endpoint can reach it.
    const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: `factory-${Date.now()}` }));
    expect(new URL(QueueUrl!).host).not.toBe(new URL(process.env.SQS_ENDPOINT!).host);
    const { Attributes } = await client.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    expect(Attributes?.QueueArn).toContain('factory-');
    factory.destroy();
  });
});
