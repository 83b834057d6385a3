import type { INestApplicationContext } from '@nestjs/common';
import type { NestFactory } from '@nestjs/core';
import type { SqsDispatchOptions } from '../sqs/sqs-module-options.interface';
import type { SqsRecordLike } from '../sqs/sqs-record.interface';

/** The SQS event a Lambda event source mapping delivers (structurally `aws-lambda`'s `SQSEvent`). */
export interface SqsLambdaEvent {
  Records: SqsRecordLike[];
}

/** The partial batch response: the ids of the records SQS must redeliver. */
export interface SqsBatchResponse {
  batchItemFailures: Array<{ itemIdentifier: string }>;
}

/** The part of the Lambda `Context` the host reads. */
export interface LambdaContextLike {
  getRemainingTimeInMillis?(): number;
  awsRequestId?: string;
}

/** Options of `createSqsLambdaHandler()`; dispatch options override `SqsModule`'s. */
export interface SqsLambdaHandlerOptions extends SqsDispatchOptions {
  /** Queue name used for routing; default: the name in each record's `eventSourceARN`. */
  queue?: string;
  /** Options for `NestFactory.createApplicationContext` (logger, ...). `abortOnError` defaults to `false`. */
  nestOptions?: Parameters<typeof NestFactory.createApplicationContext>[1];
  /** Runs once after bootstrap, before the first batch: `app.useGlobalInterceptors(...)`, etc. */
  configure?: (app: INestApplicationContext) => void | Promise<void>;
}

/** The handler `createSqsLambdaHandler()` returns. */
export interface SqsLambdaHandler {
  (event: SqsLambdaEvent, context?: LambdaContextLike): Promise<SqsBatchResponse>;
  /** The sandbox's Nest application context (bootstrapped on first use). */
  getApp(): Promise<INestApplicationContext>;
  /** Closes the application context (tests; Lambda sandboxes simply end). */
  close(): Promise<void>;
}
