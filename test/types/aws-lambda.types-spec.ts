// Compiled, never run: `npm run typecheck` checks this file, and test/aws-lambda-types.e2e-spec.ts
// compiles it on its own and fails on any error. It holds the package's promise that its Lambda
// types and AWS's own (`@types/aws-lambda`) are assignable both ways, without the package
// depending on `@types/aws-lambda`. The `@ts-expect-error` lines fail if a type decays to `any`.
import { Module } from '@nestjs/common';
import type { Context, SQSBatchResponse, SQSEvent, SQSHandler, SQSRecord } from 'aws-lambda';
import { createSqsLambdaHandler, SqsBatchResponse, SqsLambdaEvent, SqsRecordLike } from '../../lib';
import { buildLambdaContext, buildSqsEvent, buildSqsRecord } from '../../lib/testing';

@Module({})
class AppModule {}

// The handler is an SQSHandler...
export const handler: SQSHandler = createSqsLambdaHandler(AppModule);

// ...and takes what Lambda passes, typed as AWS types it.
declare const event: SQSEvent;
declare const context: Context;
export const answered: Promise<SQSBatchResponse> = createSqsLambdaHandler(AppModule)(event, context);
export const answeredWithoutContext: Promise<SqsBatchResponse> = createSqsLambdaHandler(AppModule)(event);

// The package's own types take AWS's values, and AWS's take the package's.
export const asOwnEvent: SqsLambdaEvent = event;
export const asOwnRecord: SqsRecordLike = event.Records[0];
declare const ownResponse: SqsBatchResponse;
export const asAwsResponse: SQSBatchResponse = ownResponse;

// Built records and events are AWS's types, attributes of every kind included.
export const record: SQSRecord = buildSqsRecord({ id: 'evt-1' });
export const withAttributes: SQSRecord = buildSqsRecord('Test message.', {
  messageAttributes: { tenant: 'acme', priority: 2, signature: Buffer.from('sig') },
  groupId: 'g1',
});
export const built: SQSEvent = buildSqsEvent([record, withAttributes]);
export const awsContextLike: Pick<Context, 'awsRequestId' | 'getRemainingTimeInMillis'> = {
  awsRequestId: 'r',
  getRemainingTimeInMillis: buildLambdaContext().getRemainingTimeInMillis!,
};

// Wrong shapes are refused: the types are not `any`.
// @ts-expect-error an event without Records is not an SQS event
export const noRecords: Promise<unknown> = createSqsLambdaHandler(AppModule)({});
// @ts-expect-error a built record is a record, not a string
export const notAString: string = buildSqsRecord({ id: 'evt-1' });
// @ts-expect-error a record without messageId is not one
export const noMessageId: SqsRecordLike = { body: '' };
