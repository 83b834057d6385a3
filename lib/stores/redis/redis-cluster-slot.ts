/** A key's Redis Cluster hash slot, as the specification defines it: the batch scripts run once per slot. */

const SLOTS = 16_384;

/** CRC16/XMODEM (polynomial 0x1021, initial 0), one byte at a time from a 256-entry table. */
const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[byte] = crc;
  }
  return table;
})();

function crc16(bytes: Uint8Array, start: number, end: number): number {
  let crc = 0;
  for (let i = start; i < end; i++) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ bytes[i]) & 0xff];
  return crc;
}

const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }

/** The slot of `key`, or of its `{hash tag}` when it has one. */
export function clusterSlotOf(key: string | Uint8Array): number {
  const bytes = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  const open = bytes.indexOf(OPEN);
  if (open >= 0) {
    const close = bytes.indexOf(CLOSE, open + 1);
    if (close > open + 1) return crc16(bytes, open + 1, close) % SLOTS;
  }
  return crc16(bytes, 0, bytes.length) % SLOTS;
}
