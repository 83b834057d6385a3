import { expect } from '@jest/globals';
import { Controller, INestMicroservice, Module } from '@nestjs/common';
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { NestFactory } from '@nestjs/core';
import { EventPattern, Payload, Server } from '@nestjs/microservices';
import { Idempotent, IdempotencyModule } from 'nestjs-idempotent-sqs';
import { SqsServer } from 'nestjs-idempotent-sqs/microservices';
import { queueDepth } from './queue-depth.js';

const effects: string[] = [];

@Controller()
class PaymentsController {
  @EventPattern('payment_captured')
  @Idempotent()
  async onCaptured(@Payload() event: { id: string; paymentId: string }): Promise<void> {
    effects.push(event.paymentId);
  }
}

@Module({ imports: [IdempotencyModule.forRoot({})], controllers: [PaymentsController] })
class PaymentsModule {}

/**
 * The `nestjs-idempotent-sqs/microservices` entry in the app's Nest: `SqsServer` extends the app's
 * own `Server`, polls a real queue on fauxqs with the cell's sqs-consumer, and an event sent twice
 * (a producer retry) has one effect.
 */
export async function checkMicroservice(): Promise<void> {
  const endpoint = process.env.SQS_ENDPOINT!;
  const client = {
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'compat', secretAccessKey: 'compat' },
  };
  const sqs = new SQSClient(client);
  const { QueueUrl: url } = await sqs.send(
    new CreateQueueCommand({
      QueueName: `compat-ms-${Date.now()}`,
      // Two copies may arrive in one batch: the in-flight one comes back after a second, as a duplicate.
      Attributes: { VisibilityTimeout: '1' },
    }),
  );
  const body = JSON.stringify({ type: 'payment_captured', id: 'pay-1', paymentId: 'p-1' });
  await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));
  await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));

  const server = new SqsServer({ queues: [{ name: 'payments', url: url! }], client, waitTimeSeconds: 1 });
  expect(server).toBeInstanceOf(Server);
  const microservice: INestMicroservice = await NestFactory.createMicroservice(PaymentsModule, {
    strategy: server,
    logger: false,
  });
  await microservice.listen();
  try {
    const deadline = Date.now() + 15_000;
    while ((effects.length === 0 || (await queueDepth(sqs, url!)) > 0) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(effects).toEqual(['p-1']);
    expect(await queueDepth(sqs, url!)).toBe(0);
  } finally {
    await microservice.close();
    sqs.destroy();
  }
}
