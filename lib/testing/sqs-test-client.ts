import { SqsConfigurationError } from '../common/sqs-idempotency.error';
import type { INestApplicationContext } from '@nestjs/common';
import { SqsLambdaEventProcessor } from '../lambda/sqs-lambda-event.processor';
import type {
  LambdaContextLike,
  SqsBatchResponse,
  SqsLambdaHandlerOptions,
} from '../lambda/sqs-lambda.types';
import { SqsQueueRegistry } from '../sqs/nest/sqs-queue.registry';
import type { IdempotentHandlerRegistry } from '../idempotency/idempotent-handler.registry';
import { IDEMPOTENT_HANDLER_POLICIES } from '../idempotency/idempotency.constants';
import type { SqsRecordLike } from '../sqs/sqs-record.interface';
import { readOptions } from '../common/known-options';
import type { SqsRecordResult, SqsRecordStatus } from '../idempotency/record-outcome';
import { LAMBDA_OPTION_SHAPE } from '../lambda/create-sqs-lambda-handler';
import {
  buildLambdaContext,
  buildSqsEvent,
  buildSqsRecord,
  SqsTestRecordOptions,
} from './sqs-lambda-record.builder';

/** Options of a test client: the queue it "is", and the Lambda handler options to apply. */
export interface SqsTestClientOptions extends SqsLambdaHandlerOptions {
  /** Default queue of the records it builds. Default `'test-queue'` (`'test-queue.fifo'` for FIFO batches and records with a `groupId`). */
  defaultQueue?: string;
  /** The Lambda deadline each batch gets. Default 30 s. */
  remainingTimeMs?: number;
}

/** Options of `sendBatch()`. */
export interface SqsTestBatchOptions extends Omit<SqsTestRecordOptions, 'messageId' | 'groupId'> {
  /** Build FIFO records (queue name ends with `.fifo`). */
  fifo?: boolean;
  /** `MessageGroupId` per body: a list (index for index) or a function. Default for FIFO: one group `'g1'`. */
  groups?: readonly string[] | ((body: unknown, index: number) => string);
}

/** What a batch came to. */
export interface SqsTestBatchResult {
  /** The records sent, to resend them (a redelivery keeps the messageId). */
  records: SqsRecordLike[];
  /** What Lambda would receive. */
  response: SqsBatchResponse;
  /** Each record's result, in order. */
  results: SqsRecordResult[];
  /** Each record's status, in order. */
  statuses: SqsRecordStatus[];
}

/** What one message came to. */
export interface SqsTestSendResult {
  record: SqsRecordLike;
  response: SqsBatchResponse;
  result: SqsRecordResult;
  status: SqsRecordStatus;
}

/**
 * Drives an app's SQS handlers in tests exactly as the Lambda host does: it builds faithful SQS
 * Lambda records and sends them through the same record pipeline, idempotency store and Nest
 * pipeline. The app must import `SqsModule`.
 *
 * @example
 * ```ts
 * const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
 * await moduleRef.init();
 * const sqs = new SqsTestClient(moduleRef);
 * const first = await sqs.send({ type: 'order_created', id: 'e-1', orderId: 'o-1', amount: 5 });
 * expect(first.status).toBe('OK');
 * expect((await sqs.send({ type: 'order_created', id: 'e-1', orderId: 'o-1', amount: 5 })).status).toBe('DUPLICATE');
 * ```
 */
export class SqsTestClient {
  private readonly processor: SqsLambdaEventProcessor;
  private readonly dispatcher: SqsQueueRegistry;
  private readonly registry: Pick<IdempotentHandlerRegistry, 'startupWarnings'> | undefined;
  private readonly options: SqsTestClientOptions;

  constructor(app: Pick<INestApplicationContext, 'get'>, options: SqsTestClientOptions = {}) {
    const shape = { ...LAMBDA_OPTION_SHAPE, defaultQueue: 'string', remainingTimeMs: 'number' } as const;
    this.options = options = readOptions(options, shape, 'SqsTestClient options', SqsConfigurationError);
    try {
      this.dispatcher = app.get(SqsQueueRegistry, { strict: false });
    } catch {
      throw new SqsConfigurationError(
        'SqsTestClient: the app has no SqsQueueRegistry; import SqsModule.forRoot() in the module under test.',
      );
    }
    try {
      this.registry = app.get(IDEMPOTENT_HANDLER_POLICIES, { strict: false });
    } catch {
      this.registry = undefined; // no IdempotencyModule
    }
    this.processor = new SqsLambdaEventProcessor(this.dispatcher, options);
  }

  /**
   * What the app warned about its handlers and event classes at start-up: an event class without
   * validators, a handler class it does not provide, a default key its event lacks, ... Nest's
   * testing module prints no warning (its logger prints errors only), so a test sees them here:
   * `expect(sqs.startupWarnings).toEqual([])`.
   */
  get startupWarnings(): readonly string[] {
    return [...this.dispatcher.startupWarnings, ...(this.registry?.startupWarnings ?? [])];
  }

  /**
   * Sends one message (a batch of one). A record with a `groupId` must go to a FIFO queue, as a FIFO
   * batch must (see `sendBatch()`); without a queue it goes to the default, else `'test-queue.fifo'`.
   */
  async send(body: unknown, options: SqsTestRecordOptions = {}): Promise<SqsTestSendResult> {
    const grouped = options.groupId !== undefined;
    const queue = options.queue ?? this.options.defaultQueue ?? (grouped ? 'test-queue.fifo' : 'test-queue');
    if (grouped) this.checkFifo(queue, 'send', `a FIFO record (groupId ${JSON.stringify(options.groupId)})`);
    const record = buildSqsRecord(body, { ...options, queue });
    const { response, results } = await this.sendRecords([record]);
    return { record, response, result: results[0], status: results[0].status };
  }

  /**
   * Sends several messages as one Lambda batch. A FIFO batch (`fifo` or `groups`) must go to a FIFO
   * queue (its name ends with `.fifo`, or `SqsModule` configures it `fifo: true`): on any other the
   * records would run concurrently, unordered, and the test would prove nothing about order.
   */
  async sendBatch(
    bodies: readonly unknown[],
    options: SqsTestBatchOptions = {},
  ): Promise<SqsTestBatchResult> {
    const { fifo, groups, ...recordOptions } = options;
    const grouped = Boolean(fifo || groups);
    const queue =
      recordOptions.queue ?? this.options.defaultQueue ?? (grouped ? 'test-queue.fifo' : 'test-queue');
    if (grouped) this.checkFifo(queue, 'sendBatch', `a FIFO batch (${fifo ? 'fifo: true' : 'groups'})`);
    const groupOf =
      typeof groups === 'function' ? groups : (_: unknown, index: number) => groups?.[index] ?? 'g1';
    const records = bodies.map((body, index) =>
      buildSqsRecord(body, {
        ...recordOptions,
        queue,
        groupId: grouped ? groupOf(body, index) : undefined,
      }),
    );
    return this.sendRecords(records);
  }

  /** Sends prepared records (e.g. the same record again, as a redelivery) as one batch. */
  async sendRecords(records: SqsRecordLike[], context?: LambdaContextLike): Promise<SqsTestBatchResult> {
    const { response, results } = await this.processor.process(
      buildSqsEvent(records),
      context ?? buildLambdaContext(this.options.remainingTimeMs),
    );
    return { records, response, results, statuses: results.map((result) => result.status) };
  }

  /** Refuses FIFO records for a queue that is not FIFO: they would run as a standard queue's, and prove nothing. */
  private checkFifo(queue: string, call: string, sent: string): void {
    if (this.dispatcher.queue(queue, this.options).fifo) return;
    throw new SqsConfigurationError(
      `SqsTestClient.${call}: ${sent} for queue "${queue}", which is not FIFO: its records would run ` +
        "concurrently, unordered. Send it to a queue named '*.fifo', or configure the queue with fifo: true " +
        'in SqsModule.forRoot({ queues }).',
    );
  }

  /** The same record delivered again, as SQS does after a visibility timeout (receive count + 1). */
  static redelivery(record: SqsRecordLike): SqsRecordLike {
    const count = Number(record.attributes?.ApproximateReceiveCount ?? '1') + 1;
    return { ...record, attributes: { ...record.attributes, ApproximateReceiveCount: String(count) } };
  }
}
