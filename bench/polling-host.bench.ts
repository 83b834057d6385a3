import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { Injectable, INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { IsInt, IsString, Min } from 'class-validator';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Consumer } from 'sqs-consumer';
import {
  IdempotencyModule,
  Idempotent,
  SqsConsumerManager,
  SqsEvent,
  SqsMessageHandler,
  SqsModule,
} from '../lib';
import { BenchCase, Result, runRounds, Sample } from './bench-harness';
import { newPayload } from './bench-redis';

/**
 * The polling host against what it is built on: records per second through `SqsModule` (sqs-consumer
 * in batch mode, then decode, validate, route, run, ack by returning the message) against a bare
 * sqs-consumer batch handler that `JSON.parse`s each body and returns the batch, each draining its
 * own standard queue on one fauxqs (in a process of its own) with the same batch size and long
 * poll. A third case, a bare SDK loop (`ReceiveMessage` of 10, `DeleteMessageBatch`), is the
 * emulator's own ceiling for one poller: when all three are close, the emulator bounds them.
 */

@SqsEvent('order_created')
class OrderCreated {
  @IsString() id!: string;
  @IsString() orderId!: string;
  @IsInt() @Min(1) amount!: number;
}

/** Counts what the handlers ran, and wakes whoever waits for a number. */
class Tally {
  count = 0;
  private waiting: { target: number; resolve: () => void } | undefined;
  add(n: number): void {
    this.count += n;
    if (this.waiting && this.count >= this.waiting.target) this.waiting.resolve();
  }
  /** Resolves once `target` records were handled; rejects, saying so, after `timeoutMs`. */
  reach(target: number, timeoutMs: number, what: string): Promise<void> {
    if (this.count >= target) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${what}: ${this.count} of ${target} records handled after ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.waiting = {
        target,
        resolve: () => {
          clearTimeout(timer);
          this.waiting = undefined;
          resolve();
        },
      };
    });
  }
}

const moduleTally = new Tally();
const idempotentTally = new Tally();

@Injectable()
class PlainOrdersHandler {
  @SqsMessageHandler(OrderCreated, { queue: 'bench-plain' })
  async onOrderCreated(_event: OrderCreated): Promise<void> {
    moduleTally.add(1);
  }
}

@Injectable()
class IdempotentOrdersHandler {
  @SqsMessageHandler(OrderCreated, { queue: 'bench-idempotent' })
  @Idempotent()
  async onOrderCreated(_event: OrderCreated): Promise<void> {
    idempotentTally.add(1);
  }
}

const BATCH_SIZE = 10;
const WAIT_TIME_SECONDS = 1;
/** The longest a drain may take before the bench says which case is stuck. */
const DRAIN_TIMEOUT_MS = 120_000;

export const POLLING_CASES = ['sqsModule', 'sqsModuleIdempotent', 'sqsConsumer', 'sdkLoop'] as const;
export type PollingCase = (typeof POLLING_CASES)[number];
export type PollingResults = Record<PollingCase, Result>;

/** fauxqs in a child process: its address, and how to stop it. */
export interface FauxqsProcess {
  endpoint: string;
  stop(): Promise<void>;
}

export async function startFauxqsProcess(): Promise<FauxqsProcess> {
  const child = spawn(process.execPath, [join(__dirname, 'support', 'fauxqs-server.mjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const endpoint = await new Promise<string>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`fauxqs exited (${code}) before it listened`)));
    createInterface({ input: child.stdout! }).once('line', resolve);
  });
  return {
    endpoint,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function benchPollingHost(
  endpoint: string,
  { messages, rounds, warmups }: { messages: number; rounds: number; warmups: number },
  log: (line: string) => void,
): Promise<PollingResults> {
  const sqs = new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const queueUrl = async (name: string) =>
    (await sqs.send(new CreateQueueCommand({ QueueName: `${name}-${Date.now().toString(36)}` }))).QueueUrl!;
  const urls: Record<PollingCase, string> = {
    sqsModule: await queueUrl('bench-plain'),
    sqsModuleIdempotent: await queueUrl('bench-idempotent'),
    sqsConsumer: await queueUrl('bench-consumer'),
    sdkLoop: await queueUrl('bench-sdk'),
  };
  const consumerOptions = { batchSize: BATCH_SIZE, waitTimeSeconds: WAIT_TIME_SECONDS };

  @Module({
    imports: [
      IdempotencyModule.forRoot({}),
      SqsModule.forRoot({
        client: sqs,
        autoStart: false,
        ...consumerOptions,
        queues: [
          { name: 'bench-plain', url: urls.sqsModule },
          { name: 'bench-idempotent', url: urls.sqsModuleIdempotent },
        ],
      }),
    ],
    providers: [PlainOrdersHandler, IdempotentOrdersHandler],
  })
  class PollingApp {}

  const app: INestApplicationContext = await NestFactory.createApplicationContext(PollingApp, {
    logger: false,
  });
  await app.init();
  const manager = app.get(SqsConsumerManager);
  const consumerTally = new Tally();
  const bare = Consumer.create({
    queueUrl: urls.sqsConsumer,
    sqs,
    ...consumerOptions,
    handleMessageBatch: async (batch) => {
      for (const message of batch) JSON.parse(message.Body!);
      consumerTally.add(batch.length);
      return batch;
    },
  });
  bare.on('error', (error) => log(`  sqs-consumer error: ${error.message}`));

  /**
   * Drains a queue until `target` records are handled in all: resolves then, and only the time to
   * that point is measured; `after` stops the poller (its last long poll is not the case's time).
   */
  const drains: Record<PollingCase, { run(target: number): Promise<void>; after?(): Promise<void> }> = {
    sqsModule: {
      async run(target) {
        manager.start('bench-plain');
        await moduleTally.reach(target, DRAIN_TIMEOUT_MS, 'SqsModule');
      },
      after: () => manager.stop('bench-plain'),
    },
    sqsModuleIdempotent: {
      async run(target) {
        manager.start('bench-idempotent');
        await idempotentTally.reach(target, DRAIN_TIMEOUT_MS, 'SqsModule, @Idempotent()');
      },
      after: () => manager.stop('bench-idempotent'),
    },
    sqsConsumer: {
      async run(target) {
        bare.start();
        await consumerTally.reach(target, DRAIN_TIMEOUT_MS, 'sqs-consumer');
      },
      async after() {
        const stopped = new Promise<void>((resolve) => bare.once('stopped', () => resolve()));
        bare.stop({ abort: false });
        await stopped;
      },
    },
    sdkLoop: {
      async run(target) {
        let handled = 0;
        while (handled < target) {
          const { Messages = [] } = await sqs.send(
            new ReceiveMessageCommand({
              QueueUrl: urls.sdkLoop,
              MaxNumberOfMessages: BATCH_SIZE,
              WaitTimeSeconds: WAIT_TIME_SECONDS,
            }),
          );
          if (Messages.length === 0) continue;
          for (const message of Messages) JSON.parse(message.Body!);
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: urls.sdkLoop,
              Entries: Messages.map((message, i) => ({
                Id: String(i),
                ReceiptHandle: message.ReceiptHandle!,
              })),
            }),
          );
          handled += Messages.length;
        }
      },
    },
  };
  const tallies: Partial<Record<PollingCase, Tally>> = {
    sqsModule: moduleTally,
    sqsModuleIdempotent: idempotentTally,
    sqsConsumer: consumerTally,
  };

  try {
    const cases: BenchCase[] = POLLING_CASES.map((id) => ({
      id,
      async prepare() {
        await sendMessages(sqs, urls[id], messages);
      },
      async measure(): Promise<Sample> {
        const target = (tallies[id]?.count ?? 0) + messages;
        const cpuBefore = process.cpuUsage();
        const started = process.hrtime.bigint();
        await drains[id].run(id === 'sdkLoop' ? messages : target);
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const cpu = process.cpuUsage(cpuBefore);
        await drains[id].after?.();
        return { perSecond: messages / seconds, cpuMicros: (cpu.user + cpu.system) / messages };
      },
    }));
    const results = await runRounds(cases, {
      rounds,
      warmups,
      onRound: (round) => log(round < 0 ? '  warm-up round' : `  round ${round + 1}/${rounds}`),
    });
    return Object.fromEntries(POLLING_CASES.map((id) => [id, results.get(id)!])) as PollingResults;
  } finally {
    await app.close();
    sqs.destroy();
  }
}

/** Fills a queue, untimed: batches of 10, eight requests in flight. */
async function sendMessages(sqs: SQSClient, queueUrl: string, count: number): Promise<void> {
  let sent = 0;
  const worker = async () => {
    while (sent < count) {
      const size = Math.min(BATCH_SIZE, count - sent);
      sent += size;
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: Array.from({ length: size }, (_, i) => ({
            Id: String(i),
            MessageBody: JSON.stringify({ type: 'order_created', ...newPayload() }),
          })),
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}
