import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { SQS_QUEUE_REGISTRY_BINDING } from '../sqs.constants';
import { rpcTargetsOf } from '../../common/nest-internals';
import { SqsQueueRegistry } from './sqs-queue.registry';

/**
 * Hands the app's record pipeline to every `SqsServer`, so types no `@EventPattern()` handles reach
 * the `@SqsMessageHandler()` handlers; subscribes from its constructor, before any transport listens.
 * Closes those servers first on shutdown, so a hybrid app drains them before its providers go.
 */
@Injectable()
export class SqsTransportBinder implements OnModuleDestroy {
  private readonly subscription: { unsubscribe(): void } | undefined;
  /** The transports that took the record pipeline (`SqsServer`s). */
  private readonly bound: Array<{ close(): unknown }> = [];
  private readonly logger = new Logger('SqsModule');

  constructor(registry: SqsQueueRegistry, modules: ModulesContainer) {
    this.subscription = rpcTargetsOf(modules)?.subscribe((target) => {
      const bind = (target as Record<symbol, unknown> | null)?.[SQS_QUEUE_REGISTRY_BINDING];
      if (typeof bind !== 'function') return;
      try {
        bind.call(target, registry);
        this.bound.push(target as { close(): unknown });
      } catch (error) {
        // Thrown here it would reach rxjs's unhandled-error path and crash the process later.
        this.logger.error(
          `Could not bind SqsModule to an SqsServer: ${(error as Error)?.message ?? String(error)}`,
        );
      }
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.subscription?.unsubscribe();
    await Promise.all(this.bound.map((transport) => transport.close()));
  }
}
