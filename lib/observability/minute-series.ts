/**
 * Counts per minute over the last hour in one preallocated ring indexed by epoch minute (so a fleet's
 * series add up); a slot is reset when a later minute needs it, and `takeDeltas()` hands out what is new.
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

/** The epoch minute of a timestamp, as an int32 (`| 0`). */
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

  /** Adds one to counter `index` of epoch minute `minute`, allocating nothing. */
  add(minute: number, index: number): void {
    if (minute > this.minute) this.roll(minute);
    this.counts[(this.minute % SERIES_MINUTES) * this.width + index]++;
  }

  /** The last `minutes` minutes up to `nowMs`, oldest first (allocates: readers only). */
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
