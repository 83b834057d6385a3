import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Injectable, Module, Type } from '@nestjs/common';
import type { SQSEvent } from 'aws-lambda';
import { IsOptional, IsString } from 'class-validator';
import {
  createSqsLambdaHandler,
  IdempotencyModule,
  SqsContext,
  SqsMessageHandler,
  SqsModule,
  SqsQueueOptions,
} from '../lib';
import { buildLambdaContext } from '../lib/testing';

/**
 * AWS's canonical SQS sample events (test/fixtures/aws-samples, after aws-lambda-go, the Powertools
 * parser, SAM and DefinitelyTyped), each through the Lambda host (`createSqsLambdaHandler`) of an
 * app whose queue is configured for it, with the outcome each should have.
 */

function sample(name: string): SQSEvent {
  return JSON.parse(readFileSync(join(__dirname, 'fixtures', 'aws-samples', name), 'utf8')) as SQSEvent;
}

/** A text body, as the `'text'` decoder gives it. */
class TextMessage {
  @IsString() body!: string;
}

/** The JSON of the Powertools samples. */
class Hello {
  @IsString() message!: string;
  @IsOptional() @IsString() username?: string;
}

/** The JSON of DefinitelyTyped's sample. */
class Foo {
  @IsString() foo!: string;
}

interface Seen {
  event: object;
  ctx: SqsContext;
}

/** Runs a sample through the Lambda host of an app with one queue and one handler bound to it. */
async function runSample(file: string, queue: SqsQueueOptions, eventClass: Type<unknown>) {
  @Injectable()
  class Recorder {
    readonly seen: Seen[] = [];
    @SqsMessageHandler(eventClass, { queue: queue.name })
    async on(event: object, ctx: SqsContext): Promise<void> {
      this.seen.push({ event, ctx });
    }
  }
  @Module({
    imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({ queues: [queue] })],
    providers: [Recorder],
  })
  class SampleApp {}

  const handler = createSqsLambdaHandler(SampleApp, { nestOptions: { logger: false } });
  const event = sample(file);
  try {
    const response = await handler(event, buildLambdaContext());
    const seen = (await handler.getApp()).get(Recorder).seen;
    return { event, response, seen };
  } finally {
    await handler.close();
  }
}

describe('AWS sample events through the Lambda host', () => {
  it('aws-lambda-go: a text body, with String, Number and Binary attributes', async () => {
    const { response, seen } = await runSample(
      'aws-lambda-go.sqs-event.json',
      { name: 'SQSQueue', decoder: 'text' },
      TextMessage,
    );
    expect(response).toEqual({ batchItemFailures: [] });
    expect(seen.map(({ event }) => event)).toEqual([
      Object.assign(new TextMessage(), { body: 'Message Body' }),
    ]);
    const { ctx } = seen[0];
    expect([ctx.queue, ctx.messageId, ctx.receiveCount]).toEqual(['SQSQueue', 'MessageID_1', 2]);
    expect(ctx.messageAttribute('Attribute1')).toBe('AttributeValue1');
    expect(ctx.messageAttribute('Attribute2')).toBe('123');
    expect(ctx.messageAttributes.Attribute3.binaryValue).toBe('MTEwMA==');
  });

  it('Powertools: a text and a JSON record; a text queue takes both', async () => {
    const { response, seen } = await runSample(
      'powertools.sqs-base.json',
      { name: 'my-queue', decoder: 'text' },
      TextMessage,
    );
    expect(response).toEqual({ batchItemFailures: [] });
    expect(seen.map(({ event }) => (event as TextMessage).body).sort()).toEqual([
      'Test message.',
      '{"message": "foo1"}',
    ]);
    const redriven = seen.find(({ ctx }) => ctx.messageId === '2e1424d4-f796-459a-8184-9c92662be6da')!.ctx;
    expect(redriven.attributes.DeadLetterQueueSourceArn).toBe(
      'arn:aws:sqs:us-east-2:123456789012:my-queue-dead',
    );
  });

  it('Powertools: on a JSON queue the text record alone fails (to the DLQ), the JSON one is handled', async () => {
    const { response, seen } = await runSample('powertools.sqs-base.json', { name: 'my-queue' }, Hello);
    expect(response).toEqual({
      batchItemFailures: [{ itemIdentifier: '059f36b4-87a3-44ab-83d2-661975830a7d' }],
    });
    expect(seen.map(({ event }) => event)).toEqual([Object.assign(new Hello(), { message: 'foo1' })]);
  });

  it.each(['powertools.sqs-sns-event.json', 'powertools.sqs-sns-body.json'])(
    'Powertools: %s, an SNS notification, opened on a queue that takes them',
    async (file) => {
      const { response, seen } = await runSample(file, { name: 'powertools265', envelope: 'sns' }, Hello);
      expect(response).toEqual({ batchItemFailures: [] });
      expect(seen).toHaveLength(1);
      expect((seen[0].event as Hello).message).toBe('hello world');
      expect(seen[0].ctx.envelope('sns')).toMatchObject({
        messageId: 'd88d4479-6ec0-54fe-b63f-1cf9df4bb16e',
        topicArn: 'arn:aws:sns:eu-west-1:231436140809:powertools265',
        subject: undefined,
        timestamp: '2021-01-19T10:07:07.287Z',
      });
    },
  );

  it('Powertools: an SNS notification on a queue that does not take envelopes is not taken for the event', async () => {
    const { response, seen } = await runSample(
      'powertools.sqs-sns-event.json',
      { name: 'powertools265' },
      Hello,
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: '79406a00-bf15-46ca-978c-22c3613fcb30' }]);
    expect(seen).toEqual([]);
  });

  it('Powertools: SNS FIFO to SQS FIFO, in its group, with the SNS sequence number', async () => {
    const { response, seen } = await runSample(
      'powertools.sqs-sns-event-fifo.json',
      { name: 'Test.fifo', envelope: 'sns' },
      Hello,
    );
    expect(response).toEqual({ batchItemFailures: [] });
    expect((seen[0].event as Hello).username).toBe('lessa');
    expect(seen[0].ctx.groupId).toBe('powertools-test');
    expect(seen[0].ctx.envelope('sns')?.sequenceNumber).toBe('10000000000000004000');
  });

  it('SAM: "Hello from SQS!" on a text queue', async () => {
    const { response, seen } = await runSample(
      'sam.sqs-receive-message.json',
      { name: 'MyQueue', decoder: 'text' },
      TextMessage,
    );
    expect(response).toEqual({ batchItemFailures: [] });
    expect((seen[0].event as TextMessage).body).toBe('Hello from SQS!');
  });

  it('SAM: on a JSON queue the text fails as invalid, naming the message', async () => {
    const { response, seen } = await runSample('sam.sqs-receive-message.json', { name: 'MyQueue' }, Hello);
    expect(response).toEqual({
      batchItemFailures: [{ itemIdentifier: '19dd0b57-b21e-4ac1-bd88-01bbb068cb78' }],
    });
    expect(seen).toEqual([]);
  });

  it('DefinitelyTyped: a JSON body delivered for the third time', async () => {
    const { response, seen } = await runSample(
      'definitelytyped.sqs-event.json',
      { name: 'NOTFIFOQUEUE' },
      Foo,
    );
    expect(response).toEqual({ batchItemFailures: [] });
    expect(seen[0].event).toEqual(Object.assign(new Foo(), { foo: 'bar' }));
    expect(seen[0].ctx.receiveCount).toBe(3);
    expect(seen[0].ctx.attributes.AWSTraceHeader).toBe('Root=1-5e58e4c3-71b539e3d6bd4aa29600bf67;Sampled=1');
  });

  it('DefinitelyTyped: a text body on a FIFO queue', async () => {
    const { response, seen } = await runSample(
      'definitelytyped.sqs-fifo-event.json',
      { name: 'fifo.fifo', decoder: 'text' },
      TextMessage,
    );
    expect(response).toEqual({ batchItemFailures: [] });
    expect(seen[0].ctx.groupId).toBe('1');
    expect((seen[0].event as TextMessage).body).toBe('Test message.');
  });
});
