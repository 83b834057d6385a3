import { DynamicModule, Module } from '@nestjs/common';
import { Redis } from 'ioredis';
import { IdempotencyModule, SqsModule } from '../../lib';
import { RedisIdempotencyStore } from '../../lib/stores/redis';
import { CHAOS_CONFIG, CHAOS_RANDOM, ChaosHandler, LEDGER } from './chaos-handler';
import { ChaosStats } from './chaos-stats';
import { ChaosWindowInterceptor } from './chaos-window.interceptor';
import { ChaosWorkerConfig } from './chaos-worker.config';
import { EffectWindow } from './effect-window';
import { seededRandom } from '../../sample/demo/seeded-random';

/**
 * One worker of the chaos run, wired as a service would be: the Redis store (a connection it owns,
 * with the recommended ioredis settings), polling one queue with SqsModule.
 */
@Module({})
export class ChaosWorkerModule {
  static forRoot(config: ChaosWorkerConfig): DynamicModule {
    return {
      module: ChaosWorkerModule,
      imports: [
        IdempotencyModule.forRoot({
          store: new RedisIdempotencyStore(config.storeUrl),
          keyPrefix: config.keyPrefix,
          service: config.service,
          inProgressTtl: config.inProgressTtl,
          heartbeat: config.heartbeat,
          ttl: 3_600_000,
        }),
        SqsModule.forRoot({
          queues: [{ name: 'chaos', url: config.queueUrl }],
          client: {
            endpoint: config.sqsEndpoint,
            region: 'us-east-1',
            credentials: { accessKeyId: 'chaos', secretAccessKey: 'chaos' },
          },
          visibilityTimeout: config.visibilityTimeout,
          waitTimeSeconds: 1,
          batchSize: 10,
          recordLog: false,
          shutdownTimeoutMs: 10_000,
        }),
      ],
      providers: [
        { provide: CHAOS_CONFIG, useValue: config },
        { provide: CHAOS_RANDOM, useValue: seededRandom(config.seed) },
        {
          provide: LEDGER,
          useFactory: () => new Redis(config.ledgerUrl, { maxRetriesPerRequest: null }),
        },
        EffectWindow,
        ChaosStats,
        ChaosWindowInterceptor,
        ChaosHandler,
      ],
    };
  }
}
