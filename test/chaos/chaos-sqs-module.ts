import { DynamicModule } from '@nestjs/common';
import { SqsModule } from '../../lib';

/** Where a chaos worker polls: the emulator's endpoint, its queue, and the visibility timeout under test. */
export interface ChaosQueue {
  queueUrl: string;
  sqsEndpoint: string;
  visibilityTimeout: number;
}

/**
 * The polling set-up every chaos worker shares: one queue on the emulator, batches of 10, a short
 * long poll (so a killed worker's messages come back quickly), no per-record log (thousands of
 * records), and a shutdown that waits for in-flight handlers.
 */
export function chaosSqsModule(name: string, queue: ChaosQueue): DynamicModule {
  return SqsModule.forRoot({
    queues: [{ name, url: queue.queueUrl }],
    client: {
      endpoint: queue.sqsEndpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'chaos', secretAccessKey: 'chaos' },
    },
    visibilityTimeout: queue.visibilityTimeout,
    waitTimeSeconds: 1,
    batchSize: 10,
    recordLog: false,
    shutdownTimeoutMs: 10_000,
  });
}
