import { randomUUID } from 'node:crypto';
import { PerformanceObserver } from 'node:perf_hooks';
import { ClaimLatency } from '../lib/observability/claim-latency';
import { RecordJournal } from '../lib/observability/record-journal';
import { median } from './bench-harness';

/**
 * What the Idempotency Center's per-record calls cost by themselves, outside Nest: the journal's
 * `record()` for an OK record and for a duplicate (kept in its ring of recent records), and the
 * claim timer for a claim (two `performance.now()` reads and `observe()`), beside a bare
 * `Date.now()` for scale. For each: nanoseconds per call, and the garbage collections (scavenges)
 * during five million calls: code that allocates nothing causes none, while even a 16-byte boxed
 * number per call fills the young generation dozens of times over.
 */

export interface HotPathSample {
  /** Median nanoseconds per call. */
  nsPerCall: number;
  /** Scavenges during the measured calls (the most of any round). */
  gcs: number;
}

export interface CenterHotPathResults {
  okRecord: HotPathSample;
  duplicateRecord: HotPathSample;
  timedClaim: HotPathSample;
  dateNow: HotPathSample;
}

export const HOT_PATH_CALLS = 5_000_000;

export async function benchCenterHotPath(rounds: number): Promise<CenterHotPathResults> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('benchCenterHotPath needs node --expose-gc');
  // What a host hands over: strings that exist already (the record's key, message id, queue).
  const keys = Array.from({ length: 1_000 }, () => randomUUID());
  const messageIds = Array.from({ length: 1_000 }, () => randomUUID());
  const journal = new RecordJournal();
  const latency = new ClaimLatency();
  let sink = 0;
  // Hosts hand over a result object that exists already.
  const resultsOf = (status: 'OK' | 'DUPLICATE') =>
    keys.map((key, i) => ({
      status,
      eventType: 'order_created',
      key,
      messageId: messageIds[i],
      durationMs: 2,
    }));
  const record = (status: 'OK' | 'DUPLICATE') => {
    const given = resultsOf(status);
    return (i: number) => journal.record('orders', given[i % 1_000], 1, false);
  };
  const cases: Record<keyof CenterHotPathResults, (i: number) => void> = {
    okRecord: record('OK'),
    duplicateRecord: record('DUPLICATE'),
    // What IdempotencyService does around each claim when an observer is installed.
    timedClaim: () => {
      const started = performance.now();
      latency.observe(performance.now() - started);
    },
    dateNow: () => {
      sink = (sink + (Date.now() & 1)) & 1023;
    },
  };
  const results = {} as CenterHotPathResults;
  for (const [id, call] of Object.entries(cases) as Array<
    [keyof CenterHotPathResults, (i: number) => void]
  >) {
    for (let i = 0; i < 1_000_000; i++) call(i); // warm up: optimized code, rings full
    const samples: HotPathSample[] = [];
    for (let round = 0; round < rounds; round++) samples.push(await measure(call, gc));
    results[id] = {
      nsPerCall: median(samples.map((sample) => sample.nsPerCall)),
      gcs: Math.max(...samples.map((sample) => sample.gcs)),
    };
  }
  if (sink < 0) throw new Error('unreachable: keeps the control loop from being optimized away');
  return results;
}

async function measure(call: (i: number) => void, gc: () => void): Promise<HotPathSample> {
  gc();
  let gcs = 0;
  const observer = new PerformanceObserver((list) => (gcs += list.getEntries().length));
  observer.observe({ entryTypes: ['gc'] });
  const started = process.hrtime.bigint();
  for (let i = 0; i < HOT_PATH_CALLS; i++) call(i);
  const elapsed = Number(process.hrtime.bigint() - started);
  // GC entries reach the observer asynchronously.
  await new Promise((resolve) => setTimeout(resolve, 20));
  gcs += observer.takeRecords().length;
  observer.disconnect();
  return { nsPerCall: elapsed / HOT_PATH_CALLS, gcs };
}
