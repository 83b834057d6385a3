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
