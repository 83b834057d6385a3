import { createHash } from 'node:crypto';
import type { SqsMessageAttributeValue } from '../sqs/sqs-record.interface';

/**
 * `md5OfMessageAttributes` as SQS computes it, so test records carry the digest a real delivery
 * does. SQS hashes one byte string built from the attributes sorted by name; for each:
 *
 *   len(name) name  len(dataType) dataType  transport  len(value) value
 *
 * lengths are 4-byte big-endian integers, strings UTF-8, `transport` one byte (1 for `String` and
 * `Number` types, 2 for `Binary`, custom suffixes such as `Number.float` included), and a binary
 * value is hashed as its bytes, not its base64. Returns `undefined` for no attributes: SQS then
 * sends no digest.
 */
export function md5OfMessageAttributes(
  attributes: Readonly<Record<string, SqsMessageAttributeValue>> | undefined,
): string | undefined {
  const names = attributes ? Object.keys(attributes).sort(compareUtf16) : [];
  if (names.length === 0) return undefined;
  const parts: Buffer[] = [];
  for (const name of names) {
    const attribute = attributes![name];
    const binary = attribute.dataType.startsWith('Binary');
    parts.push(lengthPrefixed(Buffer.from(name, 'utf8')));
    parts.push(lengthPrefixed(Buffer.from(attribute.dataType, 'utf8')));
    parts.push(Buffer.from([binary ? 2 : 1]));
    const value = binary
      ? Buffer.from(attribute.binaryValue ?? '', 'base64')
      : Buffer.from(attribute.stringValue ?? '', 'utf8');
    parts.push(lengthPrefixed(value));
  }
  return createHash('md5').update(Buffer.concat(parts)).digest('hex');
}

function lengthPrefixed(bytes: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length, 0);
  return Buffer.concat([length, bytes]);
}

/** SQS sorts names by code unit, not by locale. */
function compareUtf16(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
