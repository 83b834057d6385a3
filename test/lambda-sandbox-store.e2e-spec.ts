import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { IsString } from 'class-validator';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import {
  createSqsLambdaHandler,
  Idempotent,
  IdempotencyModule,
  IdempotencyModuleOptions,
  SqsEvent,
  SqsMessageHandler,
  SqsModule,
} from '../lib';
import { RedisIdempotencyStore, recommendedIoRedisOptions } from '../lib/stores/redis';
import { buildLambdaContext, buildSqsEvent, buildSqsRecord } from '../lib/testing';
import { CapturingLogger } from './support/capturing-logger';
import { requires } from './support/prerequisites';

/**
 * On Lambda, a store that keeps its keys in the process (the in-memory default) dedups within one
 * sandbox: the function says so when it boots, naming the fix. Not with a shared store, and not where
 * the handler runs outside a Lambda sandbox (a test invoking it) or in another host.
 */

@SqsEvent('parcel_sent')
class ParcelSent {
  @IsString() id!: string;
}

@Injectable()
class Parcels {
  readonly sent: string[] = [];
  @SqsMessageHandler(ParcelSent)
  @Idempotent()
  async onSent(event: ParcelSent): Promise<void> {
    this.sent.push(event.id);
  }
}

function parcelsModule(idempotency: IdempotencyModuleOptions) {
  @Module({
    imports: [IdempotencyModule.forRoot(idempotency), SqsModule.forRoot({})],
    providers: [Parcels],
  })
  class ParcelsModule {}
  return ParcelsModule;
}

const SANDBOX_WARNING = 'keeps its keys in this Lambda sandbox only';
const redisGate = requires('redis-server');

describe('Lambda: a store that dedups within one sandbox only', () => {
  const saved = process.env.AWS_LAMBDA_FUNCTION_NAME;
  afterEach(() => {
    if (saved === undefined) delete process.env.AWS_LAMBDA_FUNCTION_NAME;
    else process.env.AWS_LAMBDA_FUNCTION_NAME = saved;
  });

  /** Boots the handler as its first invocation does, and returns what it logged. */
  async function boot(idempotency: IdempotencyModuleOptions): Promise<CapturingLogger> {
    const logs = new CapturingLogger();
    const handler = createSqsLambdaHandler(parcelsModule(idempotency), { nestOptions: { logger: logs } });
    try {
      const response = await handler(
        buildSqsEvent([buildSqsRecord({ type: 'parcel_sent', id: 'p-1' })]),
        buildLambdaContext(),
      );
      expect(response).toEqual({ batchItemFailures: [] });
    } finally {
      await handler.close();
    }
    return logs;
  }

  it('warns at boot in a Lambda sandbox with the in-memory store, naming the store and the fix', async () => {
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'parcels-consumer';
    const logs = await boot({});
    const warnings = logs.find('warn', SANDBOX_WARNING);
    expect(warnings).toHaveLength(1);
    expect(warnings[0].context).toBe('SqsLambda');
    expect(warnings[0].message).toContain('The idempotency store InMemoryIdempotencyStore keeps its keys');
    expect(warnings[0].message).toContain('runs its handler again');
    expect(warnings[0].message).toContain('a shared store (DynamoDbIdempotencyStore, RedisIdempotencyStore');
    // The Lambda guide quotes it as it is.
    const guide = readFileSync(join(__dirname, '..', 'docs', 'hosts', 'lambda.md'), 'utf8');
    expect(guide).toContain(`WARN [SqsLambda] ${warnings[0].message}`);
  });

  redisGate.it('says nothing with a shared store', async () => {
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'parcels-consumer';
    const redis = new Redis(process.env.REDIS_URL!, recommendedIoRedisOptions);
    try {
      const store = new RedisIdempotencyStore(redis);
      const logs = await boot({ store, keyPrefix: `sandbox-${process.pid}` });
      expect(logs.find('warn', SANDBOX_WARNING)).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });

  it('says nothing outside a Lambda sandbox (a test invoking the handler)', async () => {
    delete process.env.AWS_LAMBDA_FUNCTION_NAME;
    const logs = await boot({});
    expect(logs.find('warn', SANDBOX_WARNING)).toEqual([]);
  });

  it('says nothing in another host, even where the Lambda variable is set', async () => {
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'parcels-consumer';
    const logs = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({ imports: [parcelsModule({})] })
      .setLogger(logs)
      .compile();
    await moduleRef.init();
    await moduleRef.close();
    expect(logs.find('warn', SANDBOX_WARNING)).toEqual([]);
  });
});
