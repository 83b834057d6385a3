import { recordingStoreDefaults } from './support/recording-store';
import { testAppDefaults } from './support/test-app';

/**
 * The idempotency contract suite against a store with the batch methods, every handler kept on
 * Nest's interceptor pipeline: batched claims and completions behave alike on both paths.
 */
recordingStoreDefaults.batches = true;
testAppDefaults.nestPipeline = true;
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('./idempotency-contract.e2e-spec');
