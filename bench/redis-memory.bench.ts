import type { Redis } from 'ioredis';
import { median } from './bench-harness';
import { Contender, flushBenchDb, newPayload, usedMemory } from './bench-redis';

/**
 * Redis memory per completed key: `used_memory` before and after completing `keys` fresh keys
 * through a contender, divided by `keys`. The database is flushed (synchronously) before each
 * sample, so the hash tables start from the same size for every contender.
 */
export async function bytesPerCompletedKey(
  contender: Contender,
  admin: Redis,
  { keys, samples }: { keys: number; samples: number },
): Promise<{ median: number; samples: number[]; exampleKey: string; exampleValue: string }> {
  const values: number[] = [];
  for (let sample = 0; sample < samples; sample++) {
    await flushBenchDb(admin);
    const payloads = Array.from({ length: keys }, newPayload);
    const before = await usedMemory(admin);
    let next = 0;
    const worker = async () => {
      while (next < keys) await contender.handle(payloads[next++]);
    };
    await Promise.all(Array.from({ length: 32 }, worker));
    const after = await usedMemory(admin);
    if ((await admin.dbsize()) !== keys) throw new Error(`${contender.label}: expected ${keys} keys`);
    values.push((after - before) / keys);
  }
  const [, [exampleKey]] = await admin.scanBuffer(0, 'COUNT', 10);
  const exampleValue = (await admin.getBuffer(exampleKey))!;
  return {
    median: median(values),
    samples: values,
    exampleKey: printable(exampleKey),
    exampleValue: printable(exampleValue),
  };
}

/** A key or value as text, or as hex when it is binary (compact keys). */
function printable(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return /^[\x20-\x7e]*$/.test(text) ? text : `0x${bytes.toString('hex')} (${bytes.length} bytes)`;
}
