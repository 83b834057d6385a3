import { Injectable } from '@nestjs/common';
import type { Message } from '@aws-sdk/client-sqs';
import { InvalidSqsMessageError, SqsConsumerEventHandler } from '../../lib';
import { ChaosWorkerStats, NO_STATS } from './chaos-worker.config';

/** The counters of one worker process, reported to the controller. */
@Injectable()
export class ChaosStats {
  readonly counts: ChaosWorkerStats = { ...NO_STATS };

  /** Invalid records never reach the handler's interceptors: the consumer reports them. */
  @SqsConsumerEventHandler('chaos', 'processing_error')
  onProcessingError(error: Error, _message: Message): void {
    if (error instanceof InvalidSqsMessageError) this.counts.invalid++;
  }
}
