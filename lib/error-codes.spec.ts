import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as center from './center';
import * as root from './index';
import * as microservices from './microservices';
import * as dynamodb from './stores/dynamodb';
import * as postgres from './stores/postgres';
import * as stores from './stores';
import * as redis from './stores/redis';
import * as testing from './testing';
import * as types from './types';

// Apps branch on `code` where `instanceof` fails (two copies of the package in one app): a code is
// part of the public API, so each exported error class is listed here with its code, and one made
// in the way the library makes it must carry it.
const ENTRIES = { root, center, stores, types, testing, microservices, redis, dynamodb, postgres };

const CODES: Record<string, readonly [code: string, make: () => Error]> = {
  SqsIdempotencyError: ['SQS_IDEMPOTENCY_ERROR', () => new root.SqsIdempotencyError('x')],
  SqsConfigurationError: ['SQS_CONFIGURATION', () => new root.SqsConfigurationError('x')],
  IdempotencyError: ['IDEMPOTENCY_ERROR', () => new root.IdempotencyError('x')],
  IdempotencyInProgressError: ['IDEMPOTENCY_IN_PROGRESS', () => new root.IdempotencyInProgressError('k')],
  IdempotencyFingerprintMismatchError: [
    'IDEMPOTENCY_FINGERPRINT_MISMATCH',
    () => new root.IdempotencyFingerprintMismatchError('k', 'm1', 'm0', 'COMPLETED'),
  ],
  MissingIdempotencyKeyError: [
    'IDEMPOTENCY_KEY_MISSING',
    () => new root.MissingIdempotencyKeyError('order_created', 'keyPath "id"', 'is missing'),
  ],
  IdempotencyConfigurationError: [
    'IDEMPOTENCY_CONFIGURATION',
    () => new root.IdempotencyConfigurationError('x'),
  ],
  IdempotencyStoreError: [
    'IDEMPOTENCY_STORE_FAILED',
    () => new root.IdempotencyStoreError('tryAcquire', 'k', new Error('down')),
  ],
  IdempotencyStoreUnavailableError: [
    'IDEMPOTENCY_STORE_UNAVAILABLE',
    () =>
      new root.IdempotencyStoreUnavailableError('RedisIdempotencyStore', 'localhost:6379', new Error('down')),
  ],
  IdempotencyStoreClosedError: [
    'IDEMPOTENCY_STORE_CLOSED',
    () => new stores.IdempotencyStoreClosedError('RedisIdempotencyStore', 'redis://localhost:6379'),
  ],
  MissingPeerDependencyError: [
    'MISSING_PEER_DEPENDENCY',
    () => new root.MissingPeerDependencyError('ioredis', 'RedisIdempotencyStore'),
  ],
  InvalidSqsMessageError: [
    'SQS_INVALID_MESSAGE',
    () => new root.InvalidSqsMessageError('m1', 'orders', 'not JSON'),
  ],
  SqsFifoOrderError: ['SQS_FIFO_ORDER', () => new root.SqsFifoOrderError('m2', 'm1', 'halt_batch')],
  SqsRecordTimeoutError: ['SQS_RECORD_TIMEOUT', () => new root.SqsRecordTimeoutError('m1', 'orders', 300)],
  SqsProducerError: ['SQS_PRODUCER', () => new root.SqsProducerError('x')],
  SqsSendError: ['SQS_SEND_FAILED', () => new root.SqsSendError('https://sqs/q', [], [])],
  SkipMessageException: ['SKIP_MESSAGE', () => new root.SkipMessageException()],
  DynamoDbIdempotencyTableError: [
    'DYNAMODB_TABLE_UNUSABLE',
    () => new dynamodb.DynamoDbIdempotencyTableError('idempotency', 'does not exist', 'Create it.'),
  ],
};

function exportedErrorClasses(): Map<string, Function> {
  const classes = new Map<string, Function>();
  for (const entry of Object.values(ENTRIES)) {
    for (const [name, value] of Object.entries(entry)) {
      if (typeof value === 'function' && value.prototype instanceof Error) classes.set(name, value);
    }
  }
  return classes;
}

describe('error codes', () => {
  it('lists every error class the entry points export (a new one needs its code here)', () => {
    expect([...exportedErrorClasses().keys()].sort()).toEqual(Object.keys(CODES).sort());
  });

  it.each(Object.entries(CODES))('%s carries its code', (name, [code, make]) => {
    const error = make();
    expect(error).toBeInstanceOf(exportedErrorClasses().get(name)!);
    expect((error as Error & { code: unknown }).code).toBe(code);
  });

  it('gives each class a code of its own', () => {
    const codes = Object.values(CODES).map(([code]) => code);
    expect(new Set(codes).size).toBe(codes.length);
  });
});

/** The rows of the error table of docs/idempotency.md ("Errors and their codes"): class and code. */
function documentedErrors(): Array<[name: string, code: string]> {
  const doc = readFileSync(join(__dirname, '..', 'docs', 'idempotency.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Errors and their codes'));
  const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| class |')));
  return [...table.matchAll(/^\| `(\w+)` \| `(\w+)` \|/gm)].map(([, name, code]) => [name, code]);
}

describe("the docs' error table", () => {
  it('lists every error class the entry points export, each with the code it carries', () => {
    const documented = documentedErrors();
    expect(documented.length).toBeGreaterThan(10);
    // SkipMessageException is the ack signal, documented below the table, not an error.
    const { SkipMessageException: skip, ...errors } = CODES;
    expect(Object.fromEntries(documented)).toEqual(
      Object.fromEntries(Object.entries(errors).map(([name, [code]]) => [name, code])),
    );
    expect(skip[0]).toBe('SKIP_MESSAGE');
  });
});

describe('an error raised for bad options carries a code', () => {
  const redisUrl = 'redis://127.0.0.1:1';
  class OrderCreated {}
  const handlerOf = (event: unknown, options?: unknown) => {
    class Handlers {
      @root.SqsMessageHandler(event as never, options as never)
      onEvent(): void {}
    }
    return Handlers;
  };
  const listenerOf = (queue: unknown, event: unknown) => {
    class Listeners {
      @root.SqsConsumerEventHandler(queue as never, event as never)
      onEvent(): void {}
    }
    return Listeners;
  };

  it.each<[string, () => unknown]>([
    [
      'a Redis store option of no such name',
      () => new redis.RedisIdempotencyStore(redisUrl, { compactkeys: true } as never),
    ],
    [
      'a Redis store serverCheck',
      () => new redis.RedisIdempotencyStore(redisUrl, { serverCheck: 'sometimes' as never }),
    ],
    ['a store startupTimeoutMs', () => new redis.RedisIdempotencyStore(redisUrl, { startupTimeoutMs: -1 })],
    [
      'the Redis stats store recentLimit',
      () => new redis.RedisIdempotencyStatsStore({} as never, 'k', { recentLimit: 0 }),
    ],
    ['the in-memory store maxKeys', () => new root.InMemoryIdempotencyStore({ maxKeys: 0 })],
    [
      'a DynamoDB store with a tableName that is not text',
      () => new dynamodb.DynamoDbIdempotencyStore({ tableName: 5 } as never),
    ],
    [
      'a DynamoDB store with an empty sort key',
      () => new dynamodb.DynamoDbIdempotencyStore({ tableName: 't', sortKey: { name: 'sk', value: '' } }),
    ],
    [
      'a Postgres store table name',
      () => new postgres.PostgresIdempotencyStore('postgres://x', { table: '' }),
    ],
    [
      'a Postgres store sweeper',
      () => new postgres.PostgresIdempotencyStore('postgres://x', { sweeper: { intervalMs: 0 } }),
    ],
    ['a Postgres store connection', () => new postgres.PostgresIdempotencyStore(42 as never)],
    ['@SqsMessageHandler of no class', () => handlerOf(undefined)],
    ['@SqsMessageHandler options', () => handlerOf(OrderCreated, { queue: 5 })],
    ['@SqsEvent of an empty type', () => root.SqsEvent('')],
    ['@SqsEvent of the fallback type', () => root.SqsEvent('*')],
    ['@SqsEvent options', () => root.SqsEvent('x', { decodr: 'text' } as never)],
    ['@SqsConsumerEventHandler queue', () => listenerOf('', 'error')],
    ['@SqsConsumerEventHandler event', () => listenerOf('orders', 'procesing_error')],
    ['buildSqsRecord envelope', () => testing.buildSqsRecord({}, { envelope: 'sqs' as never })],
    ['buildCloudEvent extension', () => testing.buildCloudEvent({}, { extensions: { id: 'x' } })],
  ])('%s', (_, make) => {
    let thrown: unknown;
    try {
      make();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(root.SqsIdempotencyError);
    expect((thrown as { code: string }).code).toMatch(/^(IDEMPOTENCY|SQS)_CONFIGURATION$/);
  });
});
