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
  // The default sort compares UTF-16 code units, as SQS does (not the locale).
  const names = attributes ? Object.keys(attributes).sort() : [];
  if (names.length === 0) return undefined;
  const hash = createHash('md5');
  for (const name of names) {
    const { dataType, binaryValue, stringValue } = attributes![name];
    const binary = dataType.startsWith('Binary');
    hash.update(lengthPrefixed(Buffer.from(name, 'utf8')));
    hash.update(lengthPrefixed(Buffer.from(dataType, 'utf8')));
    hash.update(Buffer.from([binary ? 2 : 1]));
    hash.update(
      lengthPrefixed(Buffer.from((binary ? binaryValue : stringValue) ?? '', binary ? 'base64' : 'utf8')),
    );
  }
  return hash.digest('hex');
}

function lengthPrefixed(bytes: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length, 0);
  return Buffer.concat([length, bytes]);
}
