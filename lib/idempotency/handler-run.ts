import { isObservable, lastValueFrom, Observable } from 'rxjs';

/** A handler call: its value, a promise, or an observable consumed to its last value (as Nest does). */
export type HandlerRun<T> = () => T | PromiseLike<T> | Observable<T>;

/** `run`'s outcome as a value: awaited, and an observable consumed to its last value. */
export async function outcomeOf<T>(run: HandlerRun<T>): Promise<T> {
  const result = await run();
  return isObservable(result) ? lastValueFrom(result, { defaultValue: undefined as T }) : result;
}
