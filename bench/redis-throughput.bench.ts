import type { Redis } from 'ioredis';
import { BenchCase, measureOps, Result, runRounds } from './bench-harness';
import { Contender, OrderPayload, flushBenchDb, newPayload } from './bench-redis';

/**
 * Messages per second of each contender: unique keys (every message a first sighting: claim,
 * no-op handler, complete) and repeated keys (every message a duplicate of a completed one), with
 * 1 and 32 messages in flight.
 */

export type KeyMode = 'unique' | 'repeated';

export interface ThroughputOptions {
  /** Messages per measurement, by concurrency. */
  messages: Record<number, number>;
  concurrencies: number[];
  /** Contenders measured at the highest concurrency only (variants, for comparison). */
  onlyAtTopConcurrency?: string[];
  rounds: number;
  warmups: number;
}

/** Completed keys that the repeated-key measurements cycle through. */
const REPEATED_KEYS = 1_000;

export async function benchRedisThroughput(
  contenders: Record<string, Contender>,
  admin: Redis,
  options: ThroughputOptions,
  log: (line: string) => void,
): Promise<Map<string, Result>> {
  const cases: BenchCase[] = [];
  for (const concurrency of options.concurrencies) {
    for (const mode of ['unique', 'repeated'] as const) {
      for (const [id, contender] of Object.entries(contenders)) {
        const top = Math.max(...options.concurrencies);
        if (options.onlyAtTopConcurrency?.includes(id) && concurrency !== top) continue;
        const count = options.messages[concurrency];
        let payloads: OrderPayload[] = [];
        cases.push({
          id: caseId(id, mode, concurrency),
          async prepare() {
            await flushBenchDb(admin);
            if (mode === 'unique') {
              payloads = Array.from({ length: count }, newPayload);
            } else {
              // Completed through the contender itself, so each finds its own record format.
              payloads = Array.from({ length: REPEATED_KEYS }, newPayload);
              for (const payload of payloads) await contender.handle(payload);
            }
          },
          measure: () =>
            measureOps((i) => contender.handle(payloads[i % payloads.length]), count, concurrency),
        });
      }
    }
  }
  return runRounds(cases, {
    rounds: options.rounds,
    warmups: options.warmups,
    onRound: (round) => log(round < 0 ? '  warm-up round' : `  round ${round + 1}/${options.rounds}`),
  });
}

export const caseId = (contender: string, mode: KeyMode, concurrency: number): string =>
  `${contender}/${mode}/c${concurrency}`;
