import type { ExecutionContext, Type } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import { isObservable, lastValueFrom } from 'rxjs';
import { SQS_DIRECT_CLAIM } from '../../idempotency/idempotency.constants';
import {
  globalEnhancerCount,
  NEST_CUSTOM_ROUTE_ARGS_METADATA,
  NEST_ENHANCER_METADATA,
} from '../../common/nest-enhancer-internals';
import { SQS_CONTEXT_TYPE, SqsContext } from '../sqs-context';
import { SQS_PARAMS_FACTORY } from './sqs-params.factory';
import { isThenable } from '../sqs-body.decoder';

/**
 * The direct path of an SQS handler call (its cost measured in `bench/PROFILE.md`). When a handler
 * has no enhancer but `@Idempotent()`'s interceptor (none on the method, the class or the app, no
 * parameter pipe), Nest's guards, interceptor chain, pipes and filters only call the handler, so this
 * calls it as Nest would: the parameters from the same metadata (custom decorators get an `'sqs'`
 * `ExecutionContext`), inside the claim `IdempotencyInterceptor.directClaimFor` makes as `intercept` does.
 * Anything this cannot tell for sure keeps Nest's pipeline (`undefined`): unreadable global enhancers
 * (a future Nest), another interceptor class, two `IdempotencyModule`s claiming in different stores.
 */
type SqsHandlerCall = (event: object, context: SqsContext) => Promise<unknown>;

/** What deciding a handler's path needs. */
export interface SqsDirectCallTarget {
  readonly instance: object;
  readonly methodName: string;
  /** The SQS parameter metadata of the method (`SQS_ARGS_METADATA`, as the explorer wrote it). */
  readonly argsMetadata: Record<string, SqsParamMetadata>;
  /** Nest's `ExternalContextCreator`, whose `ApplicationConfig` holds the global enhancers. */
  readonly contextCreator: object;
  readonly moduleRef: ModuleRef;
}

/** One entry of the parameter metadata, as Nest's decorators write it. */
export interface SqsParamMetadata {
  index: number;
  data?: unknown;
  pipes?: unknown[];
  factory?: (data: unknown, context: ExecutionContext) => unknown;
}

/** The handler's direct call, or `undefined` when Nest's pipeline must run it. */
export function directCallOf(target: SqsDirectCallTarget): SqsHandlerCall | undefined {
  const { instance, methodName } = target;
  const handler = (instance as Record<string, unknown>)[methodName];
  if (typeof handler !== 'function') return undefined;
  // Nest reads class enhancers off the instance's constructor, method ones off the function.
  const classRef = Object.getPrototypeOf(instance).constructor as Type<unknown>;
  if (globalEnhancerCount(target.contextCreator) !== 0) return undefined;
  const { guards, pipes, filters } = NEST_ENHANCER_METADATA;
  if ([guards, pipes, filters].some((key) => enhancersOf(key, classRef, handler).length > 0))
    return undefined;
  const interceptors = enhancersOf(NEST_ENHANCER_METADATA.interceptors, classRef, handler);
  const params = paramsOf(target, classRef, handler);
  if (params === undefined) return undefined;
  const call = (event: object, context: SqsContext): unknown =>
    callWith(handler, instance, params, [event, context]);
  const claim = interceptors.length === 0 ? null : claimOf(interceptors, target.moduleRef, handler, classRef);
  if (claim === undefined) return undefined;
  if (claim === null) {
    // No interceptor (Nest awaits the promise, or an observable's last value), or an @Idempotent()
    // without a policy, whose interceptor would only call the handler (an empty observable: `undefined`).
    const lastValue = interceptors.length === 0 ? undefined : { defaultValue: undefined };
    return async (event, context) => {
      const result = await call(event, context);
      return isObservable(result) ? lastValueFrom(result, lastValue as { defaultValue: undefined }) : result;
    };
  }
  return (event, context) => claim(event, context, () => call(event, context));
}

type DirectClaim = (payload: unknown, hostContext: unknown, run: () => unknown) => Promise<unknown>;

/** The structural shape of `IdempotencyInterceptor`'s direct entry points. */
interface DirectClaimer {
  directClaimFor(handler: Function, classRef: Function): DirectClaim | undefined;
  sharesClaimsWith(other: unknown): boolean;
}

/**
 * The claim `@Idempotent()`'s interceptor makes (`null`: none, it would only call the handler), or
 * `undefined` when an interceptor is not that one, or its instances claim in different stores.
 */
function claimOf(
  interceptors: unknown[],
  moduleRef: ModuleRef,
  handler: Function,
  classRef: Function,
): DirectClaim | null | undefined {
  const [interceptorClass] = interceptors;
  if (!interceptors.every((entry) => entry === interceptorClass && isDirectClaimer(entry))) return undefined;
  let instances: DirectClaimer[];
  try {
    instances = moduleRef.get(interceptorClass as Type<DirectClaimer>, { strict: false, each: true });
  } catch {
    return undefined;
  }
  const [first] = instances;
  if (first === undefined || !instances.every((other) => first.sharesClaimsWith(other))) return undefined;
  return first.directClaimFor(handler, classRef) ?? null;
}

function isDirectClaimer(entry: unknown): boolean {
  return typeof entry === 'function' && Object.prototype.hasOwnProperty.call(entry, SQS_DIRECT_CLAIM);
}

/** Each parameter's index and extractor, as Nest's `ExternalContextCreator` resolves it without pipes. */
type ParamPlan = Array<readonly [index: number, extract: (args: [object, SqsContext]) => unknown]>;

/** The parameters' extractors, or `undefined` when one has pipes (Nest's `PipesConsumer` runs them). */
function paramsOf(target: SqsDirectCallTarget, classRef: Function, handler: Function): ParamPlan | undefined {
  const plan: ParamPlan = [];
  for (const [key, { index, data, pipes, factory }] of Object.entries(target.argsMetadata)) {
    if (pipes !== undefined && pipes.length > 0) return undefined;
    if (key.includes(NEST_CUSTOM_ROUTE_ARGS_METADATA)) {
      const extract =
        typeof factory === 'function'
          ? (args: [object, SqsContext]) =>
              factory(data, new SqsExecutionContext(args, classRef, handler) as unknown as ExecutionContext)
          : () => null;
      plan.push([index, extract]);
    } else {
      const type = Number(key.split(':')[0]);
      plan.push([index, (args) => SQS_PARAMS_FACTORY.exchangeKeyForValue(type, data, args)]);
    }
  }
  return plan;
}

/**
 * Calls the handler with its parameters, awaiting a parameter's value only when it is a promise (a
 * custom decorator's), as Nest does. Not async, and may throw: its callers are async functions, and
 * a promise of its own per record cost a measurable share of a no-op handler's CPU.
 */
function callWith(handler: Function, instance: object, plan: ParamPlan, args: [object, SqsContext]): unknown {
  // Every parameter is set before the call: `apply` reads any index left unset as `undefined`.
  const values: unknown[] = [];
  let pending: Promise<void>[] | undefined;
  let thrown: { error: unknown } | undefined;
  for (const [index, extract] of plan) {
    try {
      const value = extract(args);
      if (isThenable(value)) {
        (pending ??= []).push(
          Promise.resolve(value).then((resolved) => {
            values[index] = resolved;
          }),
        );
      } else {
        values[index] = value;
      }
    } catch (error) {
      thrown ??= { error };
    }
  }
  if (thrown !== undefined) throw thrown.error;
  if (pending !== undefined) return Promise.all(pending).then(() => handler.apply(instance, values));
  return handler.apply(instance, values);
}

/** The enhancers of `key` on the class and on the method (Nest reads both). */
function enhancersOf(key: string, classRef: Function, handler: Function): unknown[] {
  return [classRef, handler].flatMap((target) => {
    const found: unknown = Reflect.getMetadata(key, target);
    return Array.isArray(found) ? found : [];
  });
}

/**
 * The `ExecutionContext` a custom parameter decorator gets on the direct path: what Nest's
 * `ExecutionContextHost` gives it on its own path (type `'sqs'`, the `(event, ctx)` arguments, the
 * class and the handler, the `switchTo*` views over the same arguments).
 */
class SqsExecutionContext {
  // Its methods on the prototype: a literal of closures would allocate nine per parameter and record.
  constructor(
    private readonly args: [object, SqsContext],
    private readonly classRef: Function,
    private readonly handler: Function,
  ) {}
  getClass(): Function {
    return this.classRef;
  }
  getHandler(): Function {
    return this.handler;
  }
  getArgs(): [object, SqsContext] {
    return this.args;
  }
  getArgByIndex(index: number): unknown {
    return (this.args as unknown[])[index];
  }
  getType(): string {
    return SQS_CONTEXT_TYPE;
  }
  switchToRpc() {
    return { getData: () => this.args[0], getContext: () => this.args[1] };
  }
  switchToHttp() {
    return { getRequest: () => this.args[0], getResponse: () => this.args[1], getNext: () => undefined };
  }
  switchToWs() {
    return { getClient: () => this.args[0], getData: () => this.args[1], getPattern: () => this.args[1] };
  }
}
