import { isObservable, lastValueFrom, Observable } from 'rxjs';

/**
 * A handler call as `IdempotencyService.execute` runs it: the handler's value, a promise of it, or
 * an observable of it (consumed to its last value, `undefined` when it completes empty, as Nest
 * consumes `next.handle()`).
 */
export type HandlerRun<T> = () => T | PromiseLike<T> | Observable<T>;

/** `run`'s outcome as a value: awaited, and an observable consumed to its last value. */
export async function outcomeOf<T>(run: HandlerRun<T>): Promise<T> {
  const result = await run();
  return isObservable(result) ? lastValueFrom(result, { defaultValue: undefined as T }) : result;
}
