/**
 * The current epoch minute, for the per-minute counters fed on every message.
 *
 * Reading the wall clock costs a boxed number in V8 (`Date.now()` and `performance.now()` each leave
 * 16 bytes of young-generation garbage per call), and the Center's counters need only the minute.
 * So the minute is kept in a module variable: one timer per process, fired at each minute boundary
 * and unref'd (it never keeps a process alive), brings it up to date; a record reads a small integer.
 * Callers that read the clock anyway (a record worth keeping, with its time) bring it up to date too.
 *
 * A record may be counted in the previous minute while a timer is late: an event loop blocked across
 * the boundary, or a Lambda sandbox thawed after a freeze, until its first I/O lets the timer run.
 */
let minute = -1;
let timer: ReturnType<typeof setTimeout> | undefined;

/** The current epoch minute (`Date.now() / 60_000`, truncated), as of the last minute boundary. */
export function coarseMinute(): number {
  if (timer === undefined) arm();
  return minute;
}

/** Brings the minute up to date from a clock reading a caller has taken anyway. */
export function noteTime(epochMs: number): void {
  const current = (epochMs / 60_000) | 0;
  if (current > minute) minute = current;
}

function arm(): void {
  const now = Date.now();
  minute = (now / 60_000) | 0;
  timer = setTimeout(tick, 60_000 - (now % 60_000) + 1);
  timer.unref?.();
}

function tick(): void {
  timer = undefined;
  arm();
}
