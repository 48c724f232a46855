/**
 * Redis Cluster's key slot (cluster spec: CRC16-XMODEM of the hash tag, or of the whole key when
 * it has none, mod 16384, https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#key-distribution-model).
 * An acknowledged write waits for the replicas of its own slot's primary.
 */
export function keySlot(key: string): number {
  const bytes = Buffer.from(key);
  const open = bytes.indexOf("{");
  const close = open >= 0 ? bytes.indexOf("}", open + 1) : -1;
  const tagged = close > open + 1 ? bytes.subarray(open + 1, close) : bytes;
  return crc16(tagged) % 16384;
}

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}
