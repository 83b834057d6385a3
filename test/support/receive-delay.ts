/** The delay a failed-receive log line announces ("next receive in 3.2 s", "... in 190 ms"), in ms. */
export function announcedDelayMs(line: string): number {
  const [, value, unit] = /next receive in ([\d.]+) (ms|s)\b/.exec(line) ?? [];
  return Number(value) * (unit === 's' ? 1_000 : 1);
}
