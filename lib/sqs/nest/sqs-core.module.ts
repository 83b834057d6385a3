import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { SqsQueueRegistry } from './sqs-queue.registry';
import { SqsHandlerExplorer } from './sqs-handler.explorer';

/** Handler discovery and the record pipeline, without any host; static, so an app has exactly one. */
@Module({
  imports: [DiscoveryModule],
  providers: [SqsHandlerExplorer, SqsQueueRegistry],
  exports: [SqsHandlerExplorer, SqsQueueRegistry],
})
export class SqsCoreModule {}
