import { join } from 'node:path';
import { stepsOfLoadingFixture } from './support/fork-ts';

/**
 * Batch handlers load only where used (issue 53): a process whose apps have only per-record handlers loads
 * none of the batch runner and the batch claims, only the decorator and its context (which the root entry
 * names); an app that declares one loads their start-up checks as it starts, and the first batch of a
 * queue with an `@SqsBatchHandler()` loads the rest (test/fixtures/batch-handler-loading.main.ts).
 */

const ROOT_FILES = ['sqs/sqs-batch-handler.context.ts', 'sqs/sqs-batch-handler.decorator.ts'];

describe('batch handlers load where used', () => {
  it('per-record apps load only the decorator and its context; a declared one its checks; the first batch of a batch route the rest', async () => {
    const { code, output, steps } = await stepsOfLoadingFixture(
      join(__dirname, 'fixtures', 'batch-handler-loading.main.ts'),
      {},
    );
    expect({ code, output }).toEqual({ code: 0, output: expect.any(String) });

    expect(steps['per-record']).toEqual(ROOT_FILES);
    const checks = 'sqs/routing/sqs-batch-handler.checks.ts';
    expect(steps.declared).toEqual([checks, ...ROOT_FILES]);
    expect(steps.batch).toEqual([
      'idempotency/batch-handler.claims.ts',
      'sqs/nest/sqs-batch-handler.idempotency.ts',
      'sqs/pipeline/sqs-batch-handler.runner.ts',
      checks,
      ...ROOT_FILES,
    ]);
  }, 120_000);
});
