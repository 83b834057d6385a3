import {
  MessageAttributeValue,
  SendMessageBatchCommand,
  SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import { DynamicModule, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { plainToInstance } from 'class-transformer';
import { IsInt, IsString, Min } from 'class-validator';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import {
  Idempotent,
  IdempotencyModule,
  SqsConfigurationError,
  SqsContext,
  SqsEvent,
  SqsMessageHandler,
  SqsModule,
  SqsModuleOptions,
  SqsProducer,
} from '../lib';
import type { SqsBodyDecoderFunction } from '../lib/types';
import { SqsTestClient } from '../lib/testing';
import { usePollingHarness } from './support/polling-harness';
import { readmeBlocks } from './support/readme-blocks';
import { waitFor } from './support/sqs-queues';
import { createTestApp } from './support/test-app';

/**
 * docs/migrating.md, "From @ssut/nestjs-sqs": the cut-over. That library's producers send the body
 * alone (its `id` is the SendMessageBatch entry's, which SQS never delivers), so once a consumer is
 * migrated the backlog and the messages of the producers not yet migrated fail validation. The
 * guide's decoder, read from the guide itself, reads both shapes; the messages here are sent as
 * @ssut/nestjs-sqs 3.0.1 sends them, to an app that polls an SQS emulator.
 */

/** What `SqsService.send(name, message)` of @ssut/nestjs-sqs 3.0.1 takes (its `Message`). */
interface SsutMessage {
  id: string;
  body: unknown;
  groupId?: string;
  deduplicationId?: string;
  delaySeconds?: number;
  messageAttributes?: Record<string, MessageAttributeValue>;
}

/**
 * The SendMessageBatch entry that call becomes: SqsService.send JSON-stringifies a body that is not
 * a string, and sqs-producer 5 (its `toEntry`) makes `id` the entry's `Id`, the body its
 * `MessageBody`, and copies the optional fields that are set.
 */
function ssutEntry(message: SsutMessage): SendMessageBatchRequestEntry {
  const body = typeof message.body === 'string' ? message.body : JSON.stringify(message.body);
  const entry: SendMessageBatchRequestEntry = { Id: message.id, MessageBody: body };
  if (message.delaySeconds) entry.DelaySeconds = message.delaySeconds;
  if (message.messageAttributes) entry.MessageAttributes = message.messageAttributes;
  if (message.groupId) entry.MessageGroupId = message.groupId;
  if (message.deduplicationId) entry.MessageDeduplicationId = message.deduplicationId;
  return entry;
}

/** The guide's decoder, compiled from its block (`// src/legacy-bodies.decoder.ts`). */
function guideDecoder(): SqsBodyDecoderFunction {
  const guide = readFileSync(join(__dirname, '..', 'docs', 'migrating.md'), 'utf8');
  const block = readmeBlocks(guide).find((candidate) => candidate.path === 'src/legacy-bodies.decoder.ts');
  if (!block) throw new Error('docs/migrating.md has no block // src/legacy-bodies.decoder.ts');
  const { outputText } = ts.transpileModule(block.code, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  });
  const exports: Record<string, unknown> = {};
  new Function('exports', 'require', outputText)(exports, require);
  return exports.acceptLegacyBodies as SqsBodyDecoderFunction;
}

@SqsEvent('order_created')
class OrderCreated {
  @IsString() id!: string;
  @IsString() orderId!: string;
  @IsInt() @Min(1) amount!: number;
}

@Injectable()
class OrdersHandler {
  readonly handled: Array<{ id: string; orderId: string; source?: string }> = [];

  @SqsMessageHandler(OrderCreated, { queue: 'orders' })
  @Idempotent()
  async onOrder(event: OrderCreated, ctx: SqsContext): Promise<void> {
    const source = ctx.messageAttributes.source?.stringValue;
    this.handled.push({ id: event.id, orderId: event.orderId, source });
  }
}

/** An order as a producer still on @ssut/nestjs-sqs sends it (the README's `send()` call). */
const legacyOrder: SsutMessage = {
  id: 'order-7', // the batch entry's id: not delivered
  body: { orderId: 'o-7', amount: 5 },
  messageAttributes: { source: { DataType: 'String', StringValue: 'checkout-v1' } },
};

describe('docs/migrating.md: the cut-over from @ssut/nestjs-sqs', () => {
  const polling = usePollingHarness();
  const { queues } = polling;

  /** Sends as @ssut/nestjs-sqs does; returns SQS's message ids. */
  async function sendAsSsut(url: string, messages: SsutMessage[]): Promise<string[]> {
    const { Successful = [], Failed = [] } = await queues.client.send(
      new SendMessageBatchCommand({ QueueUrl: url, Entries: messages.map(ssutEntry) }),
    );
    expect(Failed).toEqual([]);
    return messages.map(({ id }) => Successful.find((entry) => entry.Id === id)!.MessageId!);
  }

  it('without a decoder, a message of a producer not yet migrated fails validation and is not handled', async () => {
    const queue = await queues.create('ssut-hazard', { visibilityTimeout: 30 });
    const app = await polling.startApp({
      queues: [{ name: 'orders', url: queue.url }],
      providers: [OrdersHandler],
    });
    const [messageId] = await sendAsSsut(queue.url, [legacyOrder]);

    const invalid = () => polling.logged.find((line) => line.includes(`messageId=${messageId}`));
    await waitFor(() => invalid() !== undefined, 'the record to be logged');
    expect(invalid()).toContain('status=INVALID');
    expect(invalid()).toContain('id must be a string');
    expect(app.get(OrdersHandler).handled).toEqual([]);
    expect(await queues.depth(queue.url)).toBe(1); // left for redelivery, then the dead-letter queue
  });

  it("with the guide's decoder, handles both shapes once, and the queue empties", async () => {
    const queue = await queues.create('ssut-cutover');
    const app = await polling.startApp({
      queues: [{ name: 'orders', url: queue.url, decoder: guideDecoder() }],
      providers: [OrdersHandler],
    });
    // A producer already migrated: its own app, sending with SqsProducer to a queue it does not consume.
    const producer = await polling.startApp({
      queues: [{ name: 'orders', url: queue.url, consume: false }],
    });
    const [legacyId] = await sendAsSsut(queue.url, [legacyOrder]);
    const migrated = plainToInstance(OrderCreated, { id: 'evt-8', orderId: 'o-8', amount: 3 });
    await producer.get(SqsProducer).send('orders', migrated, {
      messageAttributes: { source: 'checkout-v2' },
    });

    const handler = app.get(OrdersHandler);
    await waitFor(() => handler.handled.length === 2, 'both orders to be handled');
    expect([...handler.handled].sort((a, b) => a.orderId.localeCompare(b.orderId))).toEqual([
      { id: `sqs-message:${legacyId}`, orderId: 'o-7', source: 'checkout-v1' },
      { id: 'evt-8', orderId: 'o-8', source: 'checkout-v2' },
    ]);
    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'both messages to be acked');
  });

  it('keys an old message by its SQS message id: a redelivery is a duplicate, a new message is not', async () => {
    const sqs: SqsModuleOptions = { queues: [{ name: 'orders', decoder: guideDecoder() }] };
    const app = await createTestApp({ sqs, providers: [OrdersHandler] });
    try {
      const client = new SqsTestClient(app.moduleRef, { defaultQueue: 'orders' });
      const body = ssutEntry(legacyOrder).MessageBody!; // the text SQS delivers
      const first = await client.send(body, { messageId: 'm-1' });
      const redelivery = await client.send(body, { messageId: 'm-1', receiveCount: 2 });
      const resent = await client.send(body, { messageId: 'm-2' }); // an old producer's retry: a new message
      expect([first.status, redelivery.status, resent.status]).toEqual(['OK', 'DUPLICATE', 'OK']);
      expect(app.get(OrdersHandler).handled.map(({ id }) => id)).toEqual([
        'sqs-message:m-1',
        'sqs-message:m-2',
      ]);
      expect(client.startupWarnings).toEqual([]);
    } finally {
      await app.close();
    }
  });

  describe('an options class of forRootAsync({ useClass })', () => {
    const build = async (imports: DynamicModule[]) => {
      const moduleRef = await Test.createTestingModule({ imports }).compile();
      await moduleRef.close();
    };

    it('written for @ssut/nestjs-sqs (createOptions) is refused, naming the class and the rename', async () => {
      @Injectable()
      class SqsConfigService {
        createOptions(): SqsModuleOptions {
          return { queues: [{ name: 'orders' }] };
        }
      }
      const refused = build([SqsModule.forRootAsync({ useClass: SqsConfigService as never })]);
      await expect(refused).rejects.toThrow(SqsConfigurationError);
      await expect(refused).rejects.toThrow(
        'SqsModule.forRootAsync(): SqsConfigService has no createSqsOptions() method, but createOptions(): rename it.',
      );
    });

    it('with createSqsOptions, as a method or an arrow property, starts', async () => {
      @Injectable()
      class AsMethod {
        createSqsOptions(): SqsModuleOptions {
          return { queues: [{ name: 'orders' }] };
        }
      }
      @Injectable()
      class AsProperty {
        createSqsOptions = (): SqsModuleOptions => ({ queues: [{ name: 'orders' }] });
      }
      await expect(build([SqsModule.forRootAsync({ useClass: AsMethod })])).resolves.toBeUndefined();
      await expect(build([SqsModule.forRootAsync({ useClass: AsProperty })])).resolves.toBeUndefined();
    });

    it('of IdempotencyModule without createIdempotencyOptions is refused, naming it', async () => {
      @Injectable()
      class IdempotencyConfig {
        createOptions() {
          return {};
        }
      }
      await expect(
        build([IdempotencyModule.forRootAsync({ useClass: IdempotencyConfig as never })]),
      ).rejects.toThrow(
        'IdempotencyModule.forRootAsync(): IdempotencyConfig has no createIdempotencyOptions() method, but createOptions(): rename it.',
      );
    });
  });
});
