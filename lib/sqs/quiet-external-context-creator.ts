import type { ExternalContextCreator } from '@nestjs/core';

/**
 * Nest's `ExternalContextCreator` hands an exception that none of the app's exception filters
 * handles to its default filter, which logs it (`ExceptionsHandler`, with the stack) and rethrows.
 * The SQS hosts log every record once, at its end, with its outcome and the stack of a failure
 * (`SqsRecordLogger`): through Nest's default, one failing handler would be logged twice.
 *
 * This returns a creator that is Nest's own in every respect but that last step: the app's filters
 * (global, class, method) still run first, in Nest's order, and their answer is used as Nest uses
 * it; an exception none of them handles is rethrown without a log line.
 *
 * It reaches two Nest internals, present in Nest 11 and 12: `ExternalContextCreator`'s
 * `externalErrorProxy` and `ExternalExceptionsHandler.invokeCustomFilters`. Should either be
 * missing, the creator is returned unchanged: failures are then logged twice, nothing is lost.
 */
export function withoutDefaultErrorLog(creator: ExternalContextCreator): ExternalContextCreator {
  const nestProxy = (creator as unknown as { externalErrorProxy?: ErrorProxy }).externalErrorProxy;
  if (typeof nestProxy?.createProxy !== 'function') return creator;
  const quietProxy: ErrorProxy = {
    createProxy: (target, handler, type) => {
      if (typeof handler?.invokeCustomFilters !== 'function') {
        return nestProxy.createProxy(target, handler, type);
      }
      const rethrowUnhandled = {
        next(exception: unknown, host: unknown) {
          // What Nest's ExternalExceptionsHandler.next does, minus the default filter's log line.
          const answer = handler.invokeCustomFilters!(exception, host);
          if (answer) return answer;
          throw exception;
        },
      };
      return nestProxy.createProxy(target, rethrowUnhandled, type);
    },
  };
  // A child object: the app's shared creator (other libraries use it too) stays untouched.
  return Object.create(creator, { externalErrorProxy: { value: quietProxy } }) as ExternalContextCreator;
}

/** The shapes of the two Nest internals used, structurally. */
interface ErrorProxy {
  createProxy(target: (...args: unknown[]) => unknown, handler: ExceptionsHandlerLike, type: string): unknown;
}
interface ExceptionsHandlerLike {
  next(exception: unknown, host: unknown): unknown;
  invokeCustomFilters?(exception: unknown, host: unknown): unknown;
}
