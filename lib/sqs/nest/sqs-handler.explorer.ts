import { Injectable, Logger, OnModuleInit, Type } from '@nestjs/common';
import { DiscoveryService, ExternalContextCreator, MetadataScanner, ModuleRef } from '@nestjs/core';
import { SQS_ARGS_METADATA } from '../sqs.constants';
import { NEST_ROUTE_ARGS_METADATA, withoutDefaultErrorLog } from '../../common/nest-internals';
import { discoverMethods } from '../../idempotency/handler-discovery';
import { SQS_CONTEXT_TYPE } from '../sqs-context';
import { getSqsEventType } from '../sqs-event.decorator';
import { getSqsMessageHandlerMetadata, handlerClassesDeclared } from '../sqs-message-handler.decorator';
import { SQS_PARAMS_FACTORY, SqsParamtype } from './sqs-params.factory';
import type { SqsParamMetadata } from './sqs-direct-call';
import type { SqsRoutable } from '../routing/sqs-queue.router';
import type { SqsBatchCall } from '../pipeline/sqs-batch-handler.runner';

/** One `@SqsMessageHandler()` method found in the app; `invoke` runs it through Nest's enhancer pipeline. */
export interface SqsHandlerDefinition extends SqsRoutable {
  readonly eventClass: Type<unknown>;
  /** The method and the class it is called on (what `@Idempotent()`'s policy is found by). */
  readonly method: Function;
  readonly classRef: Function;
  /**
   * Which path `invoke` takes, once it has been called (decided on the first call): `'direct'` when
   * `@Idempotent()` is the handler's only enhancer (`sqs-direct-call.ts`), else `'nest'`.
   */
  readonly path?: 'direct' | 'nest';
}

/**
 * Finds `@SqsMessageHandler()` methods and wraps each in Nest's `ExternalContextCreator` (context type
 * `'sqs'`), so guards, interceptors, pipes and filters apply as on HTTP; built on first use, so global
 * enhancers added after `init()` count. A handler whose only enhancer is `@Idempotent()` is called
 * without that machinery, to the same effect (`sqs-direct-call.ts`).
 */
@Injectable()
export class SqsHandlerExplorer implements OnModuleInit {
  private readonly logger = new Logger('SqsModule');
  private handlers: SqsHandlerDefinition[] | undefined;
  /**
   * What builds each handler's call, run by its first call; the Lambda host runs each once at its boot
   * (`warmUpHandlerCalls`), so that the first batch after INIT runs only the record's own code.
   */
  readonly callBuilders: Array<() => unknown> = [];
  /** What discovery warned about (kept for `SqsTestClient.startupWarnings`). */
  readonly startupWarnings: string[] = [];
  /** Nest's, without its default filter's log line: the record's own line reports a failure once. */
  private readonly externalContextCreator: ExternalContextCreator;
  /** Whether Nest's path leaves a failure unlogged, as the direct path does: only then do both behave alike. */
  private readonly quiet: boolean;
  /** `sqs-direct-call.ts`, loaded at module init where a handler may take it (Nest's path serves until then). */
  private directCalls: typeof import('./sqs-direct-call') | undefined;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly metadataScanner: MetadataScanner,
    externalContextCreator: ExternalContextCreator,
    private readonly moduleRef: ModuleRef,
  ) {
    this.externalContextCreator = withoutDefaultErrorLog(externalContextCreator);
    this.quiet = this.externalContextCreator !== externalContextCreator;
  }

  async onModuleInit(): Promise<void> {
    this.handlers = this.explore();
    // Only a per-record handler can take the direct path, and only where Nest's path is quiet alike.
    if (this.quiet && this.handlers.some((handler) => handler.batch === undefined)) {
      this.directCalls = await import('./sqs-direct-call');
    }
  }

  /** Every handler of the app, in discovery order. */
  getHandlers(): readonly SqsHandlerDefinition[] {
    this.handlers ??= this.explore();
    return this.handlers;
  }

  private explore(): SqsHandlerDefinition[] {
    const found: SqsHandlerDefinition[] = [];
    for (const { instance, methodName, method, providerName, isStatic } of discoverMethods(
      this.discovery,
      this.metadataScanner,
    )) {
      const binding = getSqsMessageHandlerMetadata(method);
      if (!binding) continue;
      if (!isStatic) {
        const warning =
          `${providerName}.${methodName} is an @SqsMessageHandler() on a request-scoped provider, which is not ` +
          'supported; make the provider a singleton and inject request-scoped services through ModuleRef.';
        this.logger.warn(warning);
        this.startupWarnings.push(warning);
        continue;
      }
      found.push(
        this.define(
          instance,
          methodName,
          method as Function,
          binding.eventClass,
          binding.queue,
          binding.batch,
        ),
      );
    }
    return found;
  }

  /**
   * Each class with `@SqsMessageHandler()` methods that no module of the app provides (or extends),
   * with the queues its handlers are bound to: Nest never instantiates it. Whether that is a mistake
   * depends on what the app consumes (the queue registry decides).
   */
  unprovidedHandlerClasses(): Array<[Function, ReadonlySet<string | undefined>]> {
    const provided = [...this.discovery.getProviders(), ...this.discovery.getControllers()]
      .map((wrapper) => wrapper.metatype ?? (wrapper.instance as object | undefined)?.constructor)
      .filter((type): type is Function => typeof type === 'function' && type.prototype !== undefined);
    return [...handlerClassesDeclared].filter(
      ([declared]) =>
        !provided.some(
          (type) =>
            type === declared || Object.prototype.isPrototypeOf.call(declared.prototype, type.prototype),
        ),
    );
  }

  private define(
    instance: object,
    methodName: string,
    method: Function,
    eventClass: Type<unknown>,
    queue: string | undefined,
    batch?: true,
  ): SqsHandlerDefinition {
    const argsMetadata = defineSqsArgsMetadata(instance.constructor, methodName);
    const build = (): { path: 'direct' | 'nest'; invoke: SqsHandlerDefinition['invoke'] } => {
      // A batch handler's call, `(events, batch)`, always takes Nest's path (once per batch).
      const direct =
        this.directCalls && !batch
          ? this.directCalls.directCallOf({
              instance,
              methodName,
              argsMetadata,
              contextCreator: this.externalContextCreator,
              moduleRef: this.moduleRef,
            })
          : undefined;
      if (direct) return { path: 'direct', invoke: direct };
      return {
        path: 'nest',
        invoke: this.externalContextCreator.create(
          instance,
          (instance as Record<string, (...args: unknown[]) => unknown>)[methodName],
          methodName,
          SQS_ARGS_METADATA,
          SQS_PARAMS_FACTORY,
          undefined,
          undefined,
          { guards: true, interceptors: true, filters: true },
          SQS_CONTEXT_TYPE,
        ),
      };
    };
    this.callBuilders.push(build);
    let idempotency: ReturnType<SqsBatchCall['idempotency']> | undefined;
    const definition: SqsHandlerDefinition & { path: SqsHandlerDefinition['path'] } = {
      name: `${instance.constructor.name}.${methodName}`,
      eventClass,
      method,
      classRef: instance.constructor,
      eventType: getSqsEventType(eventClass),
      queue,
      path: undefined,
      // The path is chosen on the first call; from then on `invoke` is the chosen call itself, so a
      // record goes from the pipeline straight to it (no forwarding hop through this file).
      invoke: (event, context) => {
        ({ path: definition.path, invoke: definition.invoke } = build());
        return definition.invoke(event, context);
      },
      // An @SqsBatchHandler(): called once per batch with `(events, batch)` by the batch runner, through
      // `invoke` (Nest's path: its enhancers apply to the call, `@Idempotent()`'s interceptor steps aside).
      batch: batch && {
        invoke: (events, context) => definition.invoke(events as never, context as never),
        idempotency: () =>
          (idempotency ??= import('./sqs-batch-handler.idempotency').then(({ batchIdempotencyOf }) =>
            batchIdempotencyOf(this.moduleRef, method, instance.constructor),
          )),
      },
    };
    return definition;
  }
}

type SqsArgsMetadata = Record<string, SqsParamMetadata>;

/**
 * The parameter metadata Nest reads for an SQS handler: its own parameter decorators, plus the event
 * at 0 and the context at 1 unless decorated otherwise (so pipes apply to the event as to a body).
 */
function defineSqsArgsMetadata(classRef: Function, methodName: string): SqsArgsMetadata {
  if (Reflect.hasOwnMetadata(SQS_ARGS_METADATA, classRef, methodName)) {
    return Reflect.getOwnMetadata(SQS_ARGS_METADATA, classRef, methodName) as SqsArgsMetadata;
  }
  // Nest's own parameter decorators wrote on the class declaring the method: read through inheritance.
  const own = (Reflect.getMetadata(NEST_ROUTE_ARGS_METADATA, classRef, methodName) ?? {}) as SqsArgsMetadata;
  const taken = new Set(Object.values(own).map((param) => param.index));
  const metadata: SqsArgsMetadata = { ...own };
  if (!taken.has(0)) metadata[`${SqsParamtype.PAYLOAD}:0`] = { index: 0, data: undefined, pipes: [] };
  if (!taken.has(1)) metadata[`${SqsParamtype.CONTEXT}:1`] = { index: 1, data: undefined, pipes: [] };
  Reflect.defineMetadata(SQS_ARGS_METADATA, metadata, classRef, methodName);
  return metadata;
}
