/**
 * A plain, byte-at-a-time model of msMemScope's CRC-64 (SPEC section 1),
 * written from the description alone, to check the hook's fast version.
 *
 * @module
 */
const POLY = 0x42f0e1eba9ea3693n;
const MASK = 0xffffffffffffffffn;

const TABLE = Array.from({ length: 256 }, (_, i) => {
  let crc = BigInt(i);
  for (let k = 0; k < 8; k++) crc = crc & 1n ? (crc >> 1n) ^ POLY : crc >> 1n;
  return crc;
});

/** The checksum of `bytes`, as msMemScope computes it. */
export function crc64MsMemScope(bytes: Uint8Array): bigint {
  let crc = MASK;
  for (const b of bytes) {
    crc = TABLE[Number((crc ^ BigInt(b)) & 0xffn)] ^ (crc >> 8n);
  }
  return crc ^ MASK;
}
