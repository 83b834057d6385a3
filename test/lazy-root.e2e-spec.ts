import { join } from 'node:path';
import { stepsOfLoadingFixture } from './support/fork-ts';

/**
 * What the root entry loads is what every app uses (issue 50): in one fresh process that imports the root
 * entry alone, the Lambda host's machinery loads when a Lambda handler boots, the key-path check where an
 * `@Idempotent()` handler reads its key by a path, and the Center's counter names never; nor do the checks
 * and the runner of batch handlers, the check of a fallback handler or the record timeout, in apps without
 * them, nor the store-call batcher and the transactional claim beside a store without batch calls or
 * transactions (test/fixtures/lazy-root.main.ts).
 */

/** What the root entry loads of the Lambda host: `createSqsLambdaHandler` and its sandbox's one boot. */
const LAMBDA_ROOT_FILES = ['lambda/create-sqs-lambda-handler.ts', 'lambda/sandbox-boot.ts'];

describe('the root entry loads optional parts where used', () => {
  it('loads the Lambda host when a handler boots, the key-path check where a key path is read', async () => {
    const { code, output, steps } = await stepsOfLoadingFixture(
      join(__dirname, 'fixtures', 'lazy-root.main.ts'),
      {},
    );
    expect({ code, output }).toEqual({ code: 0, output: expect.any(String) });

    expect(steps.imported).toEqual(LAMBDA_ROOT_FILES);
    // An app without IdempotencyModule: no key path to check.
    expect(steps.plain).toEqual(LAMBDA_ROOT_FILES);
    expect(steps.keyed).toEqual([...LAMBDA_ROOT_FILES, 'sqs/routing/event-key-path.check.ts'].sort());
    // The Lambda handler's boot loads the host's checks and its batch processor.
    expect(steps.lambda.filter((file) => !steps.keyed.includes(file))).toEqual([
      'lambda/constructor-metadata.check.ts',
      'lambda/sandbox-store.check.ts',
      'lambda/sqs-lambda-bindings.check.ts',
      'lambda/sqs-lambda-event.processor.ts',
      'lambda/sqs-lambda.boot.ts',
    ]);
  }, 120_000);
});
