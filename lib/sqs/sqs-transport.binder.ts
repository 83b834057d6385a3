import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { SQS_DISPATCHER_BINDING } from './sqs.constants';
import { rpcTargetsOf } from './nest-internals';
import { SqsDispatcher } from './sqs-dispatcher';

/** A transport that took the record pipeline (`SqsServer`). */
interface BoundTransport {
  close(): unknown;
}

/**
 * Hands the app's record pipeline to every `SqsServer` (the microservice transport) of the app, so
 * its records whose event type no `@EventPattern()` handles reach the `@SqsMessageHandler()`
 * handlers, under the same routing, validation and idempotency as in `SqsModule`.
 *
 * A transport strategy gets no dependency injection; Nest announces each one on the
 * `ModulesContainer`'s RPC target registry (a replaying stream). This subscribes from its
 * constructor, so the binding happens before any microservice can listen, also in a hybrid app
 * that starts its microservices ahead of `app.init()`.
 *
 * On shutdown it closes those servers (stop polling, drain the handlers in flight) from
 * `SqsModule`'s `onModuleDestroy`, which runs before every other module's: a hybrid app
 * (`connectMicroservice`) would otherwise close its microservices only after every provider was
 * destroyed, under handlers still running. Closing a server twice is harmless.
 */
@Injectable()
export class SqsTransportBinder implements OnModuleDestroy {
  private readonly subscription: { unsubscribe(): void } | undefined;
  private readonly bound: BoundTransport[] = [];
  private readonly logger = new Logger('SqsModule');

  constructor(dispatcher: SqsDispatcher, modules: ModulesContainer) {
    this.subscription = rpcTargetsOf(modules)?.subscribe((target) => {
      const bind = (target as Record<symbol, unknown> | null)?.[SQS_DISPATCHER_BINDING];
      if (typeof bind !== 'function') return;
      try {
        bind.call(target, dispatcher);
        this.bound.push(target as BoundTransport);
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
