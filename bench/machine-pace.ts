/**
 * Whether the machine ran at its usual pace around a measurement.
 *
 * This machine is a virtual one on a shared host, and now and then its CPU runs several times
 * slower for a second or more: a fixed integer loop of 2 × 10^7 steps that takes 25 ms took 122 to
 * 126 ms, and in the same minutes a whole-batch case's CPU per record doubled (5.9 µs became 11 to
 * 12 µs), on both sides of a comparison but not at the same moments, so the ratio of a round swung
 * from 0.41x to 1.14x. The CPU time a process reports cannot show it: the host's stolen time is
 * counted as the process's own. So a short fixed loop is timed before and after each measurement; a sample with
 * either check over `SLOW_FACTOR` times the fastest check of the run is measured again (at most
 * `MAX_ATTEMPTS` times, the last kept), every case alike, and the count is reported with the results.
 */

/** A check this much slower than the run's fastest means the machine slowed down. */
const SLOW_FACTOR = 1.3;
/** Attempts at one sample before the last one is kept, slowed or not. */
export const MAX_ATTEMPTS = 4;
/** Iterations of the check's loop: about 5 ms on this machine at its usual pace. */
const LOOP = 4_000_000;

/** What the checks saw over this process's measurements. */
export interface PaceTally {
  /** Samples recorded. */
  samples: number;
  /** Measurements thrown away and taken again because the machine slowed down during them. */
  repeated: number;
  /** Samples kept although the machine was slow for all their attempts. */
  keptSlowed: number;
  /** Measurements taken again, by case: to show they fell on every side alike. */
  repeatedBy: Map<string, number>;
}

export const paceTally: PaceTally = { samples: 0, repeated: 0, keptSlowed: 0, repeatedBy: new Map() };

/** Counts a measurement of `caseId` thrown away because the machine slowed during it. */
export function countRepeated(caseId: string): void {
  paceTally.repeated++;
  paceTally.repeatedBy.set(caseId, (paceTally.repeatedBy.get(caseId) ?? 0) + 1);
}

let fastest = Infinity;
let sink = 0;

/** Milliseconds the fixed loop takes now (wall clock: stolen time shows there too). */
export function checkPace(): number {
  const started = process.hrtime.bigint();
  let x = sink;
  // Int32 arithmetic throughout: `x * 31` overflowing into a double made the loop 4x slower and its
  // time swing with V8's optimization of it, which read as a slowed machine.
  for (let i = 0; i < LOOP; i++) x = (Math.imul(x, 31) + i) | 0;
  sink = x;
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (ms < fastest) fastest = ms;
  return ms;
}

/** Takes a few checks so that the first measurement has a fastest pace to be compared with. */
export function calibratePace(): void {
  for (let i = 0; i < 8; i++) checkPace();
}

/** Whether either check around a measurement says the machine was slowed. */
export function paceSlowed(before: number, after: number): boolean {
  return Math.max(before, after) > fastest * SLOW_FACTOR;
}

/** One sentence for the results: how many samples were measured again. */
export function describePaceTally(tally: PaceTally = paceTally): string {
  const kept =
    tally.keptSlowed === 0
      ? ''
      : `; ${tally.keptSlowed} kept although slowed in all ${MAX_ATTEMPTS} attempts`;
  const counts = [...tally.repeatedBy];
  const byCase =
    counts.length <= 8
      ? counts.map(([caseId, count]) => `${caseId} ${count}`).join(', ')
      : `over ${counts.length} cases, at most ${Math.max(...counts.map(([, count]) => count))} for one`;
  return (
    `a ${LOOP / 1e6}M-iteration loop timed before and after each measurement; ` +
    `${tally.repeated} measurement(s) of ${tally.samples + tally.repeated} were taken again because it ran over ` +
    `${SLOW_FACTOR}x its fastest time (the machine slowed)${byCase ? ` (${byCase})` : ''}${kept}.`
  );
}
