import type { Redis } from 'ioredis';
import { BenchCase, measureOps, Result, runRounds } from './bench-harness';
import { newPayload, OrderPayload } from './bench-redis';

/**
 * What the Postgres benches share: stores (or ways of running a handler) compared side by side,
 * each case measured on unique keys and on keys already completed, with the round trips each one
 * made counted at the client rather than assumed.
 */

/** Completed keys that the repeated-key measurements cycle through. */
const REPEATED_KEYS = 1_000;

/** One way of handling a message, with the round trips it made. */
export interface StoreContender {
  /** What `@Idempotent()` does per message (the same step as the other benches). */
  handle(payload: OrderPayload): Promise<unknown>;
  roundTrips: number;
  /** Empties the contender's data (untimed, between measurements). */
  reset(): Promise<void>;
}

export interface ContenderResult extends Result {
  /** Round trips per message in the last round (counted at the client). */
  roundTripsPerMessage: number;
}

export interface ContenderRunOptions {
  messages: Record<number, number>;
  concurrencies: number[];
  rounds: number;
  warmups: number;
}

/**
 * Measures every contender at every concurrency, on unique keys (first sightings) and on repeated
 * keys (duplicates of completed messages), the cases interleaved within each round.
 */
export async function measureContenders<Id extends string>(
  contenders: Record<Id, StoreContender>,
  caseId: (contender: Id, mode: 'unique' | 'repeated', concurrency: number) => string,
  options: ContenderRunOptions,
  log: (line: string) => void,
): Promise<Map<string, ContenderResult>> {
  const roundTrips = new Map<string, number>();
  const cases: BenchCase[] = [];
  for (const concurrency of options.concurrencies) {
    const count = options.messages[concurrency];
    for (const mode of ['unique', 'repeated'] as const) {
      for (const [id, contender] of Object.entries(contenders) as [Id, StoreContender][]) {
        const key = caseId(id, mode, concurrency);
        let payloads: OrderPayload[] = [];
        cases.push({
          id: key,
          async prepare() {
            await contender.reset();
            payloads = Array.from({ length: mode === 'unique' ? count : REPEATED_KEYS }, newPayload);
            if (mode === 'repeated') for (const payload of payloads) await contender.handle(payload);
            contender.roundTrips = 0;
          },
          async measure() {
            const sample = await measureOps(
              (i) => contender.handle(payloads[i % payloads.length]),
              count,
              concurrency,
            );
            roundTrips.set(key, contender.roundTrips / count);
            return sample;
          },
        });
      }
    }
  }
  const measured = await runRounds(cases, {
    rounds: options.rounds,
    warmups: options.warmups,
    onRound: (round) => log(round < 0 ? '  warm-up round' : `  round ${round + 1}/${options.rounds}`),
  });
  return new Map(
    [...measured].map(([id, result]) => [id, { ...result, roundTripsPerMessage: roundTrips.get(id)! }]),
  );
}

/** The ioredis client, counting every command the Redis store sends (its claims and scripts). */
export function countedRedis(redis: Redis, count: () => void): Redis {
  return new Proxy(redis, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== 'set' && property !== 'evalsha' && property !== 'eval') return value;
      return (...args: unknown[]) => {
        count();
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
