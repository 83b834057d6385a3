// The compat e2e, as a user of the published package writes it: the app from src/ driven through
// Test.createTestingModule and the test client, then the Lambda entry point, then the polling check.
// It runs unchanged in every fixture app (CommonJS Nest 11 under ts-jest, ESM Nest 12 under Jest's
// ESM mode, on Node 20 and 22); COMPAT_CELL names the cell in the output.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Test, TestingModule } from '@nestjs/testing';
import * as lib from 'nestjs-idempotent-sqs';
import {
  buildLambdaContext,
  buildSqsEvent,
  buildSqsRecord,
  SqsTestClient,
} from 'nestjs-idempotent-sqs/testing';
import { AppModule } from '../src/app.module.js';
import { handler } from '../src/lambda.js';
import { OrdersHandler } from '../src/orders.handler.js';
import { checkMicroservice } from './microservice.check.js';
import { checkPolling } from './polling.check.js';

const cell = process.env.COMPAT_CELL ?? 'compat';
const order = (id: string, orderId: string) => ({ type: 'order_placed', id, orderId, amount: 3 });

describe(`nestjs-idempotent-sqs in ${cell}`, () => {
  it("loads the build of the app's module system (one copy per app)", () => {
    if (process.env.COMPAT_MODULE === 'esm') {
      // The CommonJS build imported from ESM would expose module.exports as `default`; the ES build has none.
      expect(Object.keys(lib)).not.toContain('default');
      expect(typeof require).toBe('undefined');
    } else {
      expect(require.resolve('nestjs-idempotent-sqs')).toMatch(/dist[\\/]cjs[\\/]index\.js$/);
    }
    expect(typeof lib.SqsModule.forRoot).toBe('function');
  });

  describe('Test.createTestingModule + SqsTestClient (in-memory store)', () => {
    let moduleRef: TestingModule;
    beforeAll(async () => {
      moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
      await moduleRef.init();
    });
    afterAll(() => moduleRef?.close());

    it('runs the handler once and acks the duplicate without running it', async () => {
      const sqs = new SqsTestClient(moduleRef, { defaultQueue: 'orders' });
      const first = await sqs.send(order('evt-1', 'o-1'));
      const duplicate = await sqs.send(order('evt-1', 'o-1'));
      const invalid = await sqs.send({ type: 'order_placed', id: 'evt-2', orderId: 'o-2', amount: 0 });

      expect([first.status, duplicate.status, invalid.status]).toEqual(['OK', 'DUPLICATE', 'INVALID']);
      expect(invalid.response.batchItemFailures).toEqual([{ itemIdentifier: invalid.record.messageId }]);
      expect(moduleRef.get(OrdersHandler).shipped).toEqual([
        { orderId: 'o-1', key: 'evt-1', queue: 'orders' },
      ]);
    });
  });

  describe('createSqsLambdaHandler', () => {
    afterAll(() => handler.close());

    it('answers each batch with the ids to redeliver, and skips a producer retry', async () => {
      const ok = buildSqsRecord(order('evt-9', 'o-9'), { queue: 'orders' });
      const notJson = buildSqsRecord('{not json', { queue: 'orders' });
      // A producer retry: same event id, new message id, in a later batch.
      const retry = buildSqsRecord(order('evt-9', 'o-9'), { queue: 'orders' });

      const firstBatch = await handler(buildSqsEvent([ok, notJson]), buildLambdaContext());
      const secondBatch = await handler(buildSqsEvent([retry]), buildLambdaContext());

      expect(firstBatch).toEqual({ batchItemFailures: [{ itemIdentifier: notJson.messageId }] });
      expect(secondBatch).toEqual({ batchItemFailures: [] });
      const app = await handler.getApp();
      expect(app.get(OrdersHandler).shipped.map((s) => s.orderId)).toEqual(['o-9']);
    });
  });

  describe('sqs-consumer beside the package', () => {
    it(`polls a real queue with sqs-consumer ${process.env.COMPAT_SQS_CONSUMER ?? ''}`, async () => {
      await checkPolling();
    });

    it('serves @EventPattern handlers through SqsServer (nestjs-idempotent-sqs/microservices)', async () => {
      await checkMicroservice();
    });
  });
});
