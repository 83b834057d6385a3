// Compiled, never run: the package's declarations (its entries) under the app's compiler settings,
// with skipLibCheck off (tsconfig.package-types.json), so an error inside a shipped .d.ts surfaces.
import type { IdempotencyStore, SqsModuleOptions, SqsRecordStatus } from 'nestjs-idempotent-sqs';
import { InMemoryIdempotencyStore } from 'nestjs-idempotent-sqs';
import type { IdempotencyStatsSnapshot } from 'nestjs-idempotent-sqs/center';
import { IdempotencyCenterModule } from 'nestjs-idempotent-sqs/center';
import { AcquireResult } from 'nestjs-idempotent-sqs/stores';
import type { SqsEnvelope } from 'nestjs-idempotent-sqs/types';
import type { SqsTestSendResult } from 'nestjs-idempotent-sqs/testing';
import { buildSqsRecord } from 'nestjs-idempotent-sqs/testing';
import type { PgQueryable, PostgresIdempotencyStoreOptions } from 'nestjs-idempotent-sqs/postgres';
import { PostgresIdempotencyStore } from 'nestjs-idempotent-sqs/postgres';

export const store: IdempotencyStore = new InMemoryIdempotencyStore();
export const acquired: AcquireResult = AcquireResult.ACQUIRED;
export const options: SqsModuleOptions = { queues: [{ name: 'orders' }] };
export const status: SqsRecordStatus = 'DUPLICATE';
export const center = IdempotencyCenterModule.forRoot({ allowAnonymous: true });
export const scope: IdempotencyStatsSnapshot['scope'] = 'fleet';
export const envelope: SqsEnvelope['kind'] = 'sns';
export const messageId: SqsTestSendResult['record']['messageId'] = buildSqsRecord({}).messageId;
// The Postgres entry's types need no pg: the pool is typed by what the store calls.
const pool: PgQueryable = { query: async () => ({ rows: [], rowCount: 0 }) };
const postgresOptions: PostgresIdempotencyStoreOptions = { schema: 'billing', sweeper: false };
export const postgresStore: IdempotencyStore = new PostgresIdempotencyStore(pool, postgresOptions);
