import { recordingStoreDefaults } from './support/recording-store';

/**
 * The idempotency contract suite again, against a store with the batch methods (`tryAcquireMany`,
 * `markCompleteMany`): the claims and completions of one turn then go out as one batch call
 * (`lib/idempotency/store-call-batcher.ts`), and every row of the contract must read the same.
 */
recordingStoreDefaults.batches = true;
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('./idempotency-contract.e2e-spec');
