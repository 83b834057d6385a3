import type { DeliveryStats } from './delivery-stats';
import type { DemoProducer } from './demo-producer';

/** Everything the report reads. */
export interface DemoSnapshot {
  elapsedMs: number;
  orders: number;
  shippedOrders: number;
  producer: DemoProducer;
  stats: DeliveryStats;
  onQueue: number;
}

/** One progress line. */
export function progressLine(s: DemoSnapshot): string {
  return (
    `  ${seconds(s.elapsedMs).padStart(6)}  sent ${s.producer.total}  delivered ${s.stats.deliveries}  ` +
    `shipped ${s.shippedOrders}/${s.orders}  duplicates ${s.stats.duplicates}  ` +
    `in flight ${s.stats.inFlightDuplicates}  failed ${s.stats.failures}  on queue ${s.onQueue}`
  );
}

/** The final table. */
export function summaryTable(s: DemoSnapshot, deadLettered: number, unsafe: boolean): string {
  const rows: Array<[string, number] | undefined> = [
    ['events (distinct orders)', s.orders],
    ['messages sent', s.producer.total],
    ['  concurrent copies (same batch)', s.producer.sent.concurrentCopies],
    ['  producer retries (new messageId)', s.producer.sent.producerRetries],
    ['deliveries (with redeliveries)', s.stats.deliveries],
    [unsafe ? 'handled (no @Idempotent())' : 'handled once', s.stats.handled],
    ['duplicates acked, handler not run', s.stats.duplicates],
    ['in-flight duplicates redelivered', s.stats.inFlightDuplicates],
    ['failures (redelivered, retried)', s.stats.failures],
    ['dead-lettered', deadLettered],
  ];
  const width = 36;
  const rule = `  ${'─'.repeat(width)}  ${'─'.repeat(6)}`;
  const lines = rows
    .filter((row): row is [string, number] => row !== undefined)
    .map(([label, value]) => `  ${label.padEnd(width)}  ${String(value).padStart(6)}`);
  return [rule, ...lines, rule].join('\n');
}

/** The verdict: every order shipped exactly once? */
export function verdict(
  orders: number,
  shipmentsOf: (orderId: string) => number,
  elapsedMs: number,
  timedOut: boolean,
): { ok: boolean; line: string } {
  const twice: string[] = [];
  const never: string[] = [];
  for (let n = 0; n < orders; n++) {
    const count = shipmentsOf(`order-${n}`);
    if (count === 0) never.push(`order-${n}`);
    else if (count > 1) twice.push(`order-${n} ×${count}`);
  }
  if (twice.length === 0 && never.length === 0) {
    return {
      ok: true,
      line: `  ✔ every order shipped exactly once (${orders} of ${orders}) in ${seconds(elapsedMs)}`,
    };
  }
  const problems = [
    twice.length ? `${twice.length} order(s) shipped more than once (${sample(twice)})` : '',
    never.length ? `${never.length} order(s) never shipped (${sample(never)})` : '',
    timedOut ? 'the run timed out' : '',
  ].filter(Boolean);
  return { ok: false, line: `  ✘ ${problems.join('; ')}` };
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function sample(items: string[]): string {
  return items.length > 5 ? `${items.slice(0, 5).join(', ')}, ...` : items.join(', ');
}
