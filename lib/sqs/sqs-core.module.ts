import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { SqsDispatcher } from './sqs-dispatcher';
import { SqsHandlerExplorer } from './sqs-handler.explorer';

/**
 * Handler discovery and the record pipeline, without any host. A static module, so the app has
 * exactly one however often it is imported: by `SqsModule`, and by the Lambda host's root module
 * for apps that do not import `SqsModule`.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [SqsHandlerExplorer, SqsDispatcher],
  exports: [SqsHandlerExplorer, SqsDispatcher],
})
export class SqsCoreModule {}
