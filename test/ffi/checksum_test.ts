import assert from "node:assert/strict";
import { nativeChecksum, RING } from "../../ffi/bindings.ts";
import { crc64MsMemScope } from "./crc64_reference.ts";

const text = (s: string) => new TextEncoder().encode(s);

Deno.test("the hook's msMemScope CRC-64 gives the check value b86883e6fa710a9f for 123456789", () => {
  assert.equal(
    nativeChecksum(RING.CHECKSUM_CRC64_MSMEMSCOPE, text("123456789")),
    0xb86883e6fa710a9fn,
  );
  assert.equal(
    nativeChecksum(RING.CHECKSUM_CRC64_MSMEMSCOPE, new Uint8Array(0)),
    0n,
  );
});

Deno.test("the hook's sliced CRC-64 agrees with the byte-at-a-time model at every length", () => {
  const bytes = new Uint8Array(301).map((_, i) => (i * 131 + 7) & 0xff);
  for (const n of [1, 7, 8, 9, 63, 64, 65, 301]) {
    const part = bytes.subarray(0, n);
    assert.equal(
      nativeChecksum(RING.CHECKSUM_CRC64_MSMEMSCOPE, part),
      crc64MsMemScope(part),
      `length ${n}`,
    );
  }
});

Deno.test("the hook's default checksum tells different blocks apart and is stable", () => {
  const a = nativeChecksum(RING.CHECKSUM_XXH3, text("abc"));
  assert.equal(nativeChecksum(RING.CHECKSUM_XXH3, text("abc")), a);
  assert.notEqual(nativeChecksum(RING.CHECKSUM_XXH3, text("abd")), a);
});

Deno.test("the default checksum is xxHash's XXH3-64, bit for bit, at every length class of its code", () => {
  // Values from the system libxxhash (XXH3_64bits), for bytes (i * 131 + 7)
  // & 0xff: short inputs, the 240-byte edge, stripes, blocks and a long
  // tail, which the AVX2 build (xxh3_wide.c) hashes with its own loops.
  const bytes = new Uint8Array((1 << 20) + 13).map((_, i) =>
    (i * 131 + 7) & 0xff
  );
  const expected: [number, bigint][] = [
    [0, 0x2d06800538d394c2n],
    [3, 0x6e3e2670e61106acn],
    [240, 0xb6cfaf343fab81e6n],
    [241, 0x956cae592c67279en],
    [1024, 0x70bd377d9574f4bbn],
    [1025, 0x66c4487c41e127a7n],
    [65543, 0x350684d4451cc5adn],
    [1048589, 0x53c80c3e66e20d20n],
  ];
  for (const [n, sum] of expected) {
    assert.equal(
      nativeChecksum(RING.CHECKSUM_XXH3, bytes.subarray(0, n)),
      sum,
      `length ${n}`,
    );
  }
});
