import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import type { Redis } from 'ioredis';
import { FingerprintClaim } from '../lib/stores';
import { RedisIdempotencyStore } from '../lib/stores/redis';
import { fingerprintOf, payloadFingerprinterOf } from '../lib/idempotency/payload-fingerprint';
import { median } from './bench-harness';
import {
  Contender,
  flushBenchDb,
  handlerOverStore,
  ioredisClient,
  newPayload,
  OrderPayload,
} from './bench-redis';
import { heapBytesPerCompletedKey } from './in-memory-memory.bench';
import { bytesPerCompletedKey } from './redis-memory.bench';

/**
 * What payload fingerprints cost per remembered key, and the check that a key without one costs
 * what it did: Redis `used_memory` and the in-memory store's heap per completed key, claimed as
 * `@Idempotent()` claims it without a fingerprint (the figures of the sections above), with a
 * fingerprint and an SQS message id (what `@Idempotent({ fingerprint })` keeps on the SQS hosts),
 * and with a fingerprint alone (a transport without message ids). Then the CPU time of computing
 * one fingerprint.
 *
 * Run alone (it prints its section; `bench/RESULTS.md` is not rewritten):
 *   node --expose-gc --require ts-node/register/transpile-only bench/fingerprint-memory.bench.ts
 * with REDIS_URL and BENCH_REDIS_DB as for `npm run bench` (it flushes that database only).
 */

/** How a key is claimed. */
export type FingerprintMode = 'none' | 'with message id' | 'fingerprint only';

const MODES: readonly FingerprintMode[] = ['none', 'with message id', 'fingerprint only'];

/** The claim a handler with `fingerprint: true` makes for `payload` in `mode`. */
function claimOf(mode: FingerprintMode): ((payload: OrderPayload) => FingerprintClaim) | undefined {
  if (mode === 'none') return undefined;
  if (mode === 'fingerprint only') return (payload) => ({ fingerprint: fingerprintOf(payload) });
  // SQS message ids are UUIDs.
  return (payload) => ({ fingerprint: fingerprintOf(payload), messageId: randomUUID() });
}

export interface FingerprintMemoryResults {
  redis: Array<{ mode: FingerprintMode; compactKeys: boolean; bytes: number; exampleValue: string }>;
  heap: Array<{ mode: FingerprintMode; bytes: number }>;
  /** µs of this process's CPU per fingerprint of the bench payload. */
  cpuMicros: { event: number; fields: number };
  keys: number;
  samples: number;
  load: string;
}

export async function benchFingerprintMemory(
  admin: Redis,
  plan: { keys: number; samples: number },
  log: (line: string) => void = () => undefined,
): Promise<FingerprintMemoryResults> {
  const redis: FingerprintMemoryResults['redis'] = [];
  for (const compactKeys of [false, true]) {
    for (const mode of MODES) {
      log(`  Redis, ${compactKeys ? 'compactKeys' : 'readable keys'}, ${mode}`);
      const client = ioredisClient();
      const contender: Contender = {
        label: `RedisIdempotencyStore, ${mode}`,
        handle: handlerOverStore(new RedisIdempotencyStore(client, { compactKeys }), claimOf(mode)),
        close: async () => void (await client.quit()),
      };
      try {
        const measured = await bytesPerCompletedKey(contender, admin, plan);
        redis.push({ mode, compactKeys, bytes: measured.median, exampleValue: measured.exampleValue });
      } finally {
        await contender.close();
      }
    }
  }
  await flushBenchDb(admin);

  const heap: FingerprintMemoryResults['heap'] = [];
  for (const mode of MODES) {
    log(`  in-memory heap, ${mode}`);
    heap.push({ mode, bytes: (await heapBytesPerCompletedKey({ ...plan, claimOf: claimOf(mode) })).median });
  }

  log('  CPU per fingerprint');
  const fields = payloadFingerprinterOf(['orderId', 'amount'], 'bench')!;
  const payloads = Array.from({ length: 1_000 }, newPayload);
  // A synchronous loop, as the claim step calls it: CPU time per call, median of three runs.
  const cpu = (fingerprint: (payload: OrderPayload) => string) => {
    const run = (count: number) => {
      const before = process.cpuUsage();
      for (let i = 0; i < count; i++) fingerprint(payloads[i % payloads.length]);
      const used = process.cpuUsage(before);
      return (used.user + used.system) / count;
    };
    run(50_000); // warm-up
    return median([run(200_000), run(200_000), run(200_000)]);
  };
  const cpuMicros = {
    event: cpu((payload) => fingerprintOf(payload)),
    fields: cpu((payload) => fields.of(payload, undefined)),
  };
  return {
    redis,
    heap,
    cpuMicros,
    keys: plan.keys,
    samples: plan.samples,
    load: loadavg()
      .map((value) => value.toFixed(1))
      .join(' / '),
  };
}

/** The section of bench/RESULTS.md. */
export function renderFingerprintMemorySection(results: FingerprintMemoryResults): string[] {
  const baseline = (compactKeys: boolean) =>
    results.redis.find((row) => row.compactKeys === compactKeys && row.mode === 'none')!.bytes;
  const heapBaseline = results.heap.find((row) => row.mode === 'none')!.bytes;
  const signed = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(1)}`;
  return [
    '## Payload fingerprints: memory per completed key',
    '',
    `${results.keys.toLocaleString('en-US')} keys per sample, medians of ${results.samples} samples; load average ` +
      `when the measurement ended: ${results.load}. Each key claimed as \`@Idempotent()\` claims it: without a ` +
      'fingerprint; with `fingerprint: true` on an SQS host (the fingerprint and the SQS message id are kept); with a ' +
      'fingerprint alone (a transport without message ids). The fingerprint is 16 characters of base64url.',
    '',
    '| store | claimed | bytes/key | vs without | example value |',
    '|---|---|---:|---:|---|',
    ...results.redis.map(
      (row) =>
        `| Redis, ${row.compactKeys ? '`compactKeys`' : 'readable keys'} | ${row.mode === 'none' ? 'without a fingerprint' : row.mode} | ` +
        `${row.bytes.toFixed(1)} | ${signed(row.bytes - baseline(row.compactKeys))} | \`${row.exampleValue}\` |`,
    ),
    ...results.heap.map(
      (row) =>
        `| in-memory (heap) | ${row.mode === 'none' ? 'without a fingerprint' : row.mode} | ${row.bytes.toFixed(1)} | ` +
        `${signed(row.bytes - heapBaseline)} | |`,
    ),
    '',
    `Computing a fingerprint of the bench payload (\`{ id, orderId, amount }\`): ${results.cpuMicros.event.toFixed(2)} µs ` +
      `of CPU for the whole event, ${results.cpuMicros.fields.toFixed(2)} µs for two fields (canonical JSON, SHA-256).`,
    '',
  ];
}

async function main(): Promise<void> {
  const quick = process.env.BENCH_QUICK === '1';
  const admin = ioredisClient();
  try {
    const results = await benchFingerprintMemory(
      admin,
      quick ? { keys: 10_000, samples: 1 } : { keys: 100_000, samples: 3 },
      (line) => process.stderr.write(`${line}\n`),
    );
    process.stdout.write(`${renderFingerprintMemorySection(results).join('\n')}\n`);
  } finally {
    await admin.quit();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
    process.exitCode = 1;
  });
}
