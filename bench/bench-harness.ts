/**
 * Timing helpers shared by the benchmarks: run N operations with a fixed number of concurrent
 * workers, repeat in rounds, keep medians. Nothing here knows about Redis or Nest.
 */
import { calibratePace, checkPace, countRepeated, MAX_ATTEMPTS, paceSlowed, paceTally } from './machine-pace';

/** A measured operation: `step(i)` handles message number `i`. */
export type Step = (index: number) => Promise<unknown>;

/** One measurement: throughput, and this process's CPU time per operation (user + system). */
export interface Sample {
  perSecond: number;
  cpuMicros: number;
}

/**
 * Runs `count` steps with `concurrency` workers pulling the next index, as a consumer with that
 * many messages in flight would. CPU time per operation is the steadier figure on a shared machine:
 * other processes slow the wall clock, not the work done. (Not the host of a virtual machine: its
 * stolen time counts as the process's own, which `machine-pace.ts` catches.)
 */
export async function measureOps(step: Step, count: number, concurrency: number): Promise<Sample> {
  let next = 0;
  const worker = async () => {
    while (next < count) await step(next++);
  };
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  return { perSecond: count / seconds, cpuMicros: (cpu.user + cpu.system) / count };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** A benchmark case measured in rounds. */
export interface BenchCase {
  id: string;
  /** Untimed work before each measurement (fresh keys, a flushed database). */
  prepare?(): Promise<void>;
  /**
   * Untimed work of the measured kind between the forced garbage collection and the measurement.
   * A forced `gc()` leaves the process out of its steady state for a while: measured on the whole
   * Lambda batches, the first 2,000 records after it cost 5 to 10 times the CPU of the next ones,
   * on both sides, a fixed cost that weighs most on the fastest case.
   */
  settle?(): Promise<void>;
  /** One timed measurement. */
  measure(): Promise<Sample>;
}

/** How `runRounds` measures. */
export interface RoundsPlan {
  rounds: number;
  warmups: number;
  onRound?: (round: number) => void;
  /**
   * Take a measurement again when the machine slowed down during it (`machine-pace.ts`). For the
   * sections whose work is all in this process (the whole Lambda batches, the batch store methods on
   * a private Redis): where a server of the bench's own works on after a measurement (fauxqs,
   * Postgres, a shared Redis), the check sees that work too, and most samples were taken again.
   */
  paceCheck?: boolean;
}

/**
 * Measures every case `rounds` times after `warmups` unrecorded rounds, interleaving the cases
 * (a, b, c, a, b, c, ...) so that drift on a shared machine hits them all alike. Returns each
 * case's median.
 */
export async function runRounds(
  cases: readonly BenchCase[],
  { rounds, warmups, onRound, paceCheck = false }: RoundsPlan,
): Promise<Map<string, Result>> {
  const samples = new Map<string, Sample[]>(cases.map((benchCase) => [benchCase.id, []]));
  if (paceCheck) calibratePace();
  for (let round = 0; round < warmups + rounds; round++) {
    onRound?.(round - warmups);
    for (const benchCase of cases) {
      const recorded = round >= warmups;
      for (let attempt = 1; ; attempt++) {
        await benchCase.prepare?.();
        // Start every case with a clean heap (npm run bench passes --expose-gc): otherwise the case
        // after an allocation-heavy one pays for its garbage collection.
        (globalThis as { gc?: () => void }).gc?.();
        await benchCase.settle?.();
        const before = paceCheck ? checkPace() : 0;
        const value = await benchCase.measure();
        const slowed = paceCheck && paceSlowed(before, checkPace());
        if (recorded && slowed && attempt < MAX_ATTEMPTS) {
          countRepeated(benchCase.id);
          continue;
        }
        if (recorded) {
          samples.get(benchCase.id)!.push(value);
          if (paceCheck) paceTally.samples++;
          if (slowed) paceTally.keptSlowed++;
        }
        break;
      }
    }
  }
  return new Map(
    [...samples].map(([id, values]) => [
      id,
      {
        perSecond: median(values.map((value) => value.perSecond)),
        cpuMicros: median(values.map((value) => value.cpuMicros)),
        samples: values.map((value) => value.perSecond),
      },
    ]),
  );
}

/**
 * How many operations a case's `settle` runs before a measurement of `count`: 1,000 batches for the
 * full run, fewer for a quick run. Two costs fade over a case's first operations: the first 200
 * after a gc cost several times the next ones; and where cases share code (our Lambda handlers, one
 * library), the first ones after another case ran are slower while V8 re-optimizes that code for
 * this case. Measured on the whole Lambda batches with two copies of the same handler, rotating
 * after the handler without `@Idempotent()`: after 300 batches of settling, the copy measured right
 * after it ran 13-16% slower than the other copy; after 1,000 or 3,000, within 1-2%.
 */
export const settleCount = (count: number): number => Math.min(1_000, Math.ceil(count / 3));

/** A case's medians over its rounds (and the throughput of each round). */
export interface Result extends Sample {
  samples: number[];
}

export const formatRate = (value: number): string => Math.round(value).toLocaleString('en-US');
export const formatRatio = (value: number): string => `${value.toFixed(2)}x`;
