import { testAppDefaults } from './support/test-app';

/**
 * The idempotency contract suite again, every handler kept on Nest's interceptor pipeline by a
 * no-op global interceptor: `idempotency-contract.e2e-spec.ts` runs it on the direct path (where
 * `@Idempotent()` is the only enhancer), so both paths answer to the same tests.
 */
testAppDefaults.nestPipeline = true;
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('./idempotency-contract.e2e-spec');
