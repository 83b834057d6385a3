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
  /**
   * Boot the app when the handler is created: in Lambda's INIT phase, which runs the module that creates
   * it, so the first invocation finds the app up, or waits only for the rest of its boot. The default is
   * `true` in Lambda (its runtime sets `AWS_LAMBDA_FUNCTION_NAME`) and `false` elsewhere (tests, scripts),
   * where the app boots on the first invocation (or `getApp()`). `false` in Lambda too: for an app that
   * must open no connection when its module is loaded.
   */
  bootAtInit?: boolean;
}

/** The handler `createSqsLambdaHandler()` returns. */
export interface SqsLambdaHandler {
  (event: SqsLambdaEvent, context?: LambdaContextLike): Promise<SqsBatchResponse>;
  /**
   * The sandbox's Nest application context, once booted (the boot started with the handler at INIT, or
   * now). A failed boot rejects with its cause, and the next call (or invocation) boots again.
   */
  getApp(): Promise<INestApplicationContext>;
  /**
   * Closes the application context (tests; Lambda sandboxes simply end), after a boot in flight has ended;
   * a boot that failed is not its to report (an invocation or `getApp()` is). An invocation after `close()` boots again.
   */
  close(): Promise<void>;
}
