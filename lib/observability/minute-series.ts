/**
 * Counts per minute over the last hour, in one preallocated typed array: `width` counters per
 * minute, 60 minutes in a ring indexed by the epoch minute. Counting is an index computation and an
 * increment: no allocation, no timer, whatever the traffic. A minute's slot is reset lazily, when a
 * later minute first needs it (or a reader asks), so an idle series costs nothing either.
 *
 * Minutes are epoch minutes of the wall clock (`Date.now()`), so the series of several instances line
 * up when the fleet's are added together. A clock that steps back counts into the newest minute seen
 * rather than rewriting one an hour old.
 *
 * For sharing, the series remembers what it has already handed out (`published`): `takeDeltas()`
 * returns what was counted since, per minute, for the background flush.
 */
export const SERIES_MINUTES = 60;

const MINUTE_MS = 60_000;

/** One counter's increase in one minute, as `takeDeltas()` hands it to the flush. */
export interface MinuteDelta {
  /** Epoch minute (`Math.floor(epochMs / 60_000)`). */
  minute: number;
  /** Which counter of the minute (0 to `width - 1`). */
  index: number;
  count: number;
}

/**
 * The epoch minute of a millisecond timestamp: a small integer (about 29.7 million in 2026, within
 * int32 until the year 6053). Truncated with `| 0`, which V8 types as int32, so the result crosses a
 * function call as a small integer instead of a boxed float.
 */
export function epochMinuteOf(epochMs: number): number {
  return (epochMs / MINUTE_MS) | 0;
}

export class MinuteSeries {
  private readonly counts: Uint32Array;
  private readonly published: Uint32Array;
  /** The newest epoch minute counted into (or reset up to); -1 before the first count. */
  private minute = -1;

  constructor(readonly width: number) {
    this.counts = new Uint32Array(SERIES_MINUTES * width);
    this.published = new Uint32Array(SERIES_MINUTES * width);
  }

  /**
   * Adds one to counter `index` of epoch minute `minute` ({@link epochMinuteOf}). The per-record
   * call: it takes the minute, a small integer, rather than a millisecond timestamp (a float that
   * V8 would box on the heap to pass it), so counting allocates nothing.
   */
  add(minute: number, index: number): void {
    if (minute > this.minute) this.roll(minute);
    this.counts[(this.minute % SERIES_MINUTES) * this.width + index]++;
  }

  /**
   * The last `minutes` minutes up to the minute of `nowMs`, oldest first: for each, its epoch
   * minute and its `width` counters. Allocates (readers only).
   */
  window(nowMs: number, minutes = SERIES_MINUTES): Array<{ minute: number; counts: number[] }> {
    const newest = Math.floor(nowMs / MINUTE_MS);
    if (newest > this.minute) this.roll(newest);
    const out: Array<{ minute: number; counts: number[] }> = [];
    const span = Math.min(minutes, SERIES_MINUTES);
    for (let minute = newest - span + 1; minute <= newest; minute++) {
      const counts = new Array<number>(this.width).fill(0);
      // Minutes after the newest one counted (a clock that stepped back) hold nothing.
      if (minute <= this.minute && minute > this.minute - SERIES_MINUTES) {
        const base = (minute % SERIES_MINUTES) * this.width;
        for (let i = 0; i < this.width; i++) counts[i] = this.counts[base + i];
      }
      out.push({ minute, counts });
    }
    return out;
  }

  /** What was counted since the last call, per minute and counter (non-zero only); marks it handed out. */
  takeDeltas(nowMs: number): MinuteDelta[] {
    const newest = Math.floor(nowMs / MINUTE_MS);
    if (newest > this.minute) this.roll(newest);
    const deltas: MinuteDelta[] = [];
    if (this.minute < 0) return deltas;
    for (let minute = this.minute - SERIES_MINUTES + 1; minute <= this.minute; minute++) {
      const base = (minute % SERIES_MINUTES) * this.width;
      for (let i = 0; i < this.width; i++) {
        const count = this.counts[base + i] - this.published[base + i];
        if (count > 0) {
          deltas.push({ minute, index: i, count });
          this.published[base + i] = this.counts[base + i];
        }
      }
    }
    return deltas;
  }

  /** Moves to `minute`, emptying the slots of the minutes skipped (at most the whole hour). */
  private roll(minute: number): void {
    const from = this.minute < 0 ? minute : Math.max(this.minute + 1, minute - SERIES_MINUTES + 1);
    for (let m = from; m <= minute; m++) {
      const base = (m % SERIES_MINUTES) * this.width;
      this.counts.fill(0, base, base + this.width);
      this.published.fill(0, base, base + this.width);
    }
    this.minute = minute;
  }
}
