import { DynamicModule, Module } from '@nestjs/common';
import { Redis } from 'ioredis';
import { IdempotencyModule } from '../../lib';
import { chaosSqsModule } from './chaos-sqs-module';
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
        chaosSqsModule('chaos', config),
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
